"""Round 3 (issue 33) S8 and C3: stallsim.data (python/stallsim/data.py,
notebooks/stallsim_data.py before) refuses values stallsim never writes
(non-finite numbers, shares outside [0, 1], negative times, epochs below 1,
integers past 2^53, strings or null where JSON numbers belong, metadata
that contradicts itself) and deeply nested JSON, each as a DataError naming
the file, where each went through (or raised another exception) on f72e534.
Files stallsim wrote still load, -1e-12 s stalls included.

    /usr/bin/python3 tests/test_data_robust.py STALLSIM SRCDIR   (tests/robust3_data.sh runs it)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
del sys.argv[1:3]
sys.path.insert(0, os.path.join(SRC, 'python'))

import stallsim.data as sd  # noqa: E402

SMALL = os.path.join(SRC, 'tests', 'data', 'small.yaml')


class Malformed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='stallsim-r3-')
        cls.csv = f'{cls.tmp}/s.csv'
        subprocess.run([BIN, 'sweep', SMALL, '--vary', 'server.cpus=2,4', '--model-only', '-o', cls.csv],
                       check=True, capture_output=True)
        cls.json = f'{cls.tmp}/r.json'
        with open(cls.json, 'w') as f:
            subprocess.run([BIN, 'run', SMALL, '--model-only', '--format', 'json'], check=True, stdout=f)
        with open(cls.csv) as f:
            cls.lines = f.read().splitlines(True)
        with open(cls.csv + '.meta.json') as f:
            cls.meta = json.load(f)
        with open(cls.json) as f:
            cls.run_doc = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def sweep_with(self, col=None, value=None, meta=None, meta_text=None):
        """A copy of the sweep with COL of the first row set to VALUE, and/or
        META's keys replaced (or the metadata's text given whole)."""
        d = tempfile.mkdtemp(dir=self.tmp)
        lines = list(self.lines)
        if col:
            head = lines[0].rstrip('\n').split(',')
            row = lines[1].rstrip('\n').split(',')
            row[head.index(col)] = value
            lines[1] = ','.join(row) + '\n'
        with open(f'{d}/s.csv', 'w') as f:
            f.write(''.join(lines))
        m = dict(self.meta, **(meta or {}))
        with open(f'{d}/s.csv.meta.json', 'w') as f:
            f.write(meta_text if meta_text is not None else json.dumps(m))
        return f'{d}/s.csv'

    def run_with(self, key, value):
        d = json.loads(json.dumps(self.run_doc))
        d['variants'][0]['jobs'][0]['epochs'][0]['model'][key] = value
        path = tempfile.mkdtemp(dir=self.tmp) + '/r.json'
        with open(path, 'w') as f:
            json.dump(d, f)  # allow_nan: writes NaN / Infinity as Python's json does
        return path

    def test_stallsim_files_load(self):
        self.assertEqual(len(sd.load_sweep(self.csv).df), 8)
        self.assertEqual(len(sd.load_run(self.json).df), 4)
        # The golden sweep has stalls of -1e-12 s (float noise): still loads.
        d = tempfile.mkdtemp(dir=self.tmp)
        shutil.copy(os.path.join(SRC, 'tests', 'golden', 'sweep.csv'), f'{d}/g.csv')
        with open(os.path.join(SRC, 'tests', 'golden', 'sweep.meta.json')) as f:
            m = json.load(f)
        m['command_line'] = ['stallsim']
        with open(f'{d}/g.csv.meta.json', 'w') as f:
            json.dump(m, f)
        self.assertGreater(len(sd.load_sweep(f'{d}/g.csv').df), 0)

    def test_csv_values(self):
        cases = [('epoch_s', 'inf', 'is not a finite number'),
                 ('epoch_s', '1e999', 'is not a (finite )?number'),
                 ('epoch_s', '-3', 'out of range: expected 0 or more'),
                 ('gpu_util', '1.5', r'out of range: expected a share in \[0, 1\]'),
                 ('hit_rate', '-0.2', r'out of range: expected a share in \[0, 1\]'),
                 ('epoch', '0', 'out of range: expected an epoch'),
                 ('config', '1e30', 'is not an integer')]
        for col, value, msg in cases:
            with self.subTest(col=col, value=value):
                with self.assertRaisesRegex(sd.DataError, r's\.csv:2: error: column ' + col + '.*' + msg):
                    sd.load_sweep(self.sweep_with(col, value))

    def test_meta_values(self):
        cases = [({'configs': [2, 0]}, "'configs' is"),
                 ({'configs': [0, 9]}, "within the grid of 2"),
                 ({'rows': -1}, "'rows' is -1"),
                 ({'grid_size': 0}, "'grid_size' is 0"),
                 ({'status': 'done'}, "'status' is 'done'"),
                 ({'shard': '3/2'}, "'shard' is '3/2'"),
                 ({'command_line': [1]}, "'command_line' holds"),
                 ({'effective': {'base': {'jobs': ['x']}}}, 'jobs list of objects')]
        for meta, msg in cases:
            with self.subTest(meta=meta):
                with self.assertRaisesRegex(sd.DataError, msg):
                    sd.load_sweep(self.sweep_with(meta=meta))

    def test_meta_nan(self):
        text = json.dumps(self.meta).replace('"seed": 7', '"seed": NaN')
        with self.assertRaisesRegex(sd.DataError, 'NaN is not a JSON number'):
            sd.load_sweep(self.sweep_with(meta_text=text))

    def test_meta_deep_nesting(self):  # C3
        with self.assertRaisesRegex(sd.DataError, 'nested too deep'):
            sd.load_sweep(self.sweep_with(meta_text='[' * 100000 + ']' * 100000))
        path = tempfile.mkdtemp(dir=self.tmp) + '/r.json'
        with open(path, 'w') as f:
            f.write('{"variants": ' + '[' * 100000 + ']' * 100000 + '}')
        with self.assertRaisesRegex(sd.DataError, 'nested too deep'):
            sd.load_run(path)

    def test_meta_not_utf8(self):
        d = os.path.dirname(self.sweep_with())
        with open(f'{d}/s.csv.meta.json', 'wb') as f:
            f.write(b'{"status": "\xff"}')
        with self.assertRaisesRegex(sd.DataError, 'is not UTF-8'):
            sd.load_sweep(f'{d}/s.csv')

    def test_run_json_values(self):
        cases = [('epoch_s', '12', r"epoch_s: '12' \(row 1\) is not float64"),
                 ('epoch_s', None, r'epoch_s: (None|nan) \(row 1\)'),
                 ('epoch_s', True, 'epoch_s: True'),
                 ('epoch_s', float('nan'), 'NaN is not a JSON number'),
                 ('epoch_s', float('inf'), 'Infinity is not a JSON number'),
                 ('gpu_util', 7, r'out of range: expected a share in \[0, 1\]')]
        for key, value, msg in cases:
            with self.subTest(key=key, value=value):
                with self.assertRaisesRegex(sd.DataError, msg):
                    sd.load_run(self.run_with(key, value))


if __name__ == '__main__':
    unittest.main(verbosity=1)
