"""What `with obj:` does for the package's objects that hold a handle."""


class Closing:
    """Inputs: `with` closes the object at the end of the block, however
    the block ends."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Committing:
    """Outputs: `with` commits (close()) when the block ends normally and
    discards (_discard(), set by the class) when it ends with an exception,
    so that a failed block leaves nothing that looks complete."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self._discard()
