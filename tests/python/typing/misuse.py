"""Wrong uses of the tfrec package that the type hints must catch: mypy
(tests/python/test_typing.py) reports an error on every line that ends
with an error comment, and on no other line. Not run, only checked."""
import tfrec
import tfrec.bigtable

r = tfrec.TFRecordReader("a.tfrecord")
r.stats()["record"]  # error: a misspelt key of ReaderStats
r.stats["records"]  # error: the old dict-attribute spelling
for rec in tfrec.TFRecordReader("a.tfrecord"):
    rec.decode() + 1  # error: str + int
tfrec.TFRecordWriter("a.tfrecord").write("text")  # error: str is not bytes-like
tfrec.count(3)  # error: not a path
w = tfrec.bigtable.Writer("p", "i", "t")
w.stats["rows_acked"]  # error: the old attribute spelling
w.stats()["rows"]  # error: a ReadStats key, not a WriterStats one
tfrec.Dataset(["a"], shard=0)  # error: shard is (index, count)
tfrec.Dataset(["a"], shard="all")  # error: shard is (index, count) or "auto"
tfrec.parse_example(b"", {"a": 1})  # error: a spec maps keys to FixedLen/VarLenFeature
for batch in tfrec.Dataset(["a"], batch_size=8):
    batch.decode()  # error: a batch is a list of records
tfrec.task_identity().rank  # error: TaskIdentity has index, not rank
tfrec.bigtable.Reader("p", "i", "t", tls="yes")  # error: tls is a bool
