kubeloop undeploy website --delete-crds --delete-namespace
