"""obvalidate past one machine: the validator and the exchange judge as a library inside the partitions of a Dask or
Spark job (``obvalidate validate --engine dask``, ``obvalidate traffic --engine dask``, the PySpark entry points).

Layers, top to bottom: the engines' command line (:mod:`.cli`), the engines (:mod:`.dask_engine`, :mod:`.spark`), the
driver's passes over any engine (:mod:`.driver`), the recorded traffic judged per TPP (:mod:`.traffic`), the job's
tasks and their summary (:mod:`.job`), the inputs cut into tasks (:mod:`.inputs`), the finding rows and their Arrow
schema (:mod:`.rows`). Nothing here is imported
by ``obvalidate payload.json``: the engines are optional (``pip install obvalidate[dask]`` / ``[spark]``).
"""
