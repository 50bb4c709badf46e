kubeloop generate all copyrator --set check-author=true | kubectl apply --server-side -f -
