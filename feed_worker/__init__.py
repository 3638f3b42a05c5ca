"""Front door 3: the worker process. APScheduler runs the scheduled jobs (feed_worker.jobs)
against the engine, only while this worker holds the leader lease (docs/worker.md). It imports
``kenning``, never the other front doors."""
