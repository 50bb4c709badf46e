"""The shared cache: informers (list+watch into a store) and their indexed stores."""

from kubeloop.cache.cache import Cache
from kubeloop.cache.informer import Event, Informer
from kubeloop.cache.store import Store, object_key, split_key

__all__ = ["Cache", "Event", "Informer", "Store", "object_key", "split_key"]
