"""The resources built once per process: the embedder, the Context bundle that carries them, and
the paged sweep over a namespace. May import kenning.core, kenning.language and kenning.store.
"""
