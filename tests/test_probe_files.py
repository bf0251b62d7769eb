"""Round 3 (issue 33) H2: the probe's (stallsim.probe) file discovery drops
what is not a regular file before anything opens it. f72e534 had no such step, and
ImageFolder listed a FIFO named x.jpg: warm() blocked in open() for ever.
Runs without PyTorch (the filter is plain Python; ImageFolder is stood in
for by its samples list). Each step under alarm(20): a block fails the test.

    python3 tests/test_probe_files.py SRCDIR
"""
import os
import signal
import socket
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv[1])
del sys.argv[1:2]
sys.path.insert(0, os.path.join(SRC, 'python'))

from stallsim import pipeline, probe  # noqa: E402


class FakeImageFolder:
    def __init__(self, root):
        self.samples = [(os.path.join(d, f), 0) for d, _, fs in sorted(os.walk(root))
                        for f in sorted(fs) if f.endswith('.jpg')]
        self.imgs = self.samples
        self.targets = [0] * len(self.samples)


class ProbeFiles(unittest.TestCase):
    def setUp(self):
        signal.alarm(20)
        self.tmp = tempfile.mkdtemp(prefix='stallsim-probe-')
        c = os.path.join(self.tmp, 'c')
        os.mkdir(c)
        for i in range(3):
            with open(os.path.join(c, f'good{i}.jpg'), 'wb') as f:
                f.write(b'\xff\xd8' + b'x' * 100)
        os.mkfifo(os.path.join(c, 'pipe.jpg'))
        os.symlink('/nonexistent', os.path.join(c, 'dangling.jpg'))
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(os.path.join(c, 'sock.jpg'))

    def tearDown(self):
        signal.alarm(0)
        self.sock.close()
        for d, _, fs in os.walk(self.tmp, topdown=False):
            for f in fs:
                os.unlink(os.path.join(d, f))
            os.rmdir(d)

    def test_irregular_files_dropped_before_any_open(self):
        ds = probe.regular_only(FakeImageFolder(self.tmp), '--data x')
        names = sorted(os.path.basename(p) for p, _ in ds.samples)
        self.assertEqual(names, ['good0.jpg', 'good1.jpg', 'good2.jpg'])
        self.assertEqual(len(ds.targets), 3)
        self.assertIs(ds.imgs, ds.samples)
        # What probe.py then does with the paths: must not block.
        paths = pipeline.item_paths(ds)
        pipeline.warm(paths)
        pipeline.evict(paths)

    def test_dataset_without_samples_untouched(self):
        class Opaque:
            pass
        ds = Opaque()
        self.assertIs(probe.regular_only(ds, '--data x'), ds)


if __name__ == '__main__':
    unittest.main(verbosity=1)
