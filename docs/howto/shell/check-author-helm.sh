kubeloop generate chart copyrator -o charts/copyrator
helm install copyrator charts/copyrator -n copyrator-system --create-namespace --set settings.checkAuthor=true
