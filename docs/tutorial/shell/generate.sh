kubeloop generate crd website
kubeloop generate all website -o config/
kubeloop generate chart website -o charts/website
