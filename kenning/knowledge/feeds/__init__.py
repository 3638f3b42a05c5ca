"""Feed ingestion (docs/feeds.md): ``config`` reads feeds.yml, ``guard`` is the SSRF rule, ``fetch``
the one module with network I/O, ``parse`` turns bytes into entries (pure), ``ingest`` stores
them."""
