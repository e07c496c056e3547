"""Provider adapters (imported lazily by the registry, so an SDK is only needed when used)."""
