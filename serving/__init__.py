"""What the front doors share to serve: an ASGI app run by uvicorn in a thread (``threaded``).
Below the doors and above the engine: imports kenning and uvicorn; never a door or kenning_cli.
"""
