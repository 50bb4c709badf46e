kubeloop deploy website --image registry.example.com/website:0.1.0 --wait
