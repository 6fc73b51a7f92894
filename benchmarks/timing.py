"""The benchmarks' one timer (each bench_*.py runs as a script, so this folder is on sys.path)."""

import time


def best_time(fn, repeat: int = 1):
    """Best wall time of ``repeat`` calls of ``fn`` and the last call's result. The minimum is the
    run the shared machine disturbed least."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result
