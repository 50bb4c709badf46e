"""Packaging an operator for a cluster: Helm charts (``chart``), Dockerfiles (``dockerfile``), deploying
with server-side apply (``deploy``) and a helm binary built from its Go module (``helm``)."""
