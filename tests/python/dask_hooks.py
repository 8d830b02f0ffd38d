"""Task-start hooks for tests/python/test_distributed.py, in a module of
their own so that Dask workers import them by name (the workers get this
directory on PYTHONPATH from the test).

HoldOnce(dir, kind, index), as a task-start or task-progress hook: the
first attempt of task `index` writes dir/started-<pid>-<n> and waits until
dir/go exists, so the test can kill that worker while the task is running
(as a progress hook: with its first image converted, its shard half
written); later attempts record themselves and go straight on. Waiting is on a file the test creates, not on time."""
import os
import time


class HoldOnce:
    def __init__(self, directory, kind, index, min_done=0, give_up=300.0):
        self.directory, self.kind, self.index, self.give_up = directory, kind, index, give_up
        self.min_done = min_done  # as a progress hook: hold once this much is done

    def attempts(self):
        """started-<pid>-<n> of every attempt so far, in the order they began."""
        names = [n for n in os.listdir(self.directory) if n.startswith("started-")]
        return sorted(names, key=lambda n: int(n.rsplit("-", 1)[1]))

    def __call__(self, kind, index, count, *progress):
        if kind != self.kind or index != self.index:
            return
        if progress and progress[0] < self.min_done:
            return
        seen = self.attempts()
        if any(name.startswith("started-%d-" % os.getpid()) for name in seen):
            return  # this attempt was recorded already (a progress hook is called often)
        n = len(seen)
        with open(os.path.join(self.directory, "started-%d-%d" % (os.getpid(), n)), "w") as f:
            f.write("%d of %d\n" % (index, count))
        go = os.path.join(self.directory, "go")
        deadline = time.monotonic() + self.give_up  # a test that died must not hang workers
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)
