kubeloop init website --group tutorial.kubeloop.dev
