"""stallsim.data (python/stallsim/data.py) and the notebooks on a user's own sweeps.

    /usr/bin/python3 tests/test_notebooks.py STALLSIM SRCDIR   (tests/notebooks.sh runs it)

Every sweep here is made by the built stallsim on a 20,000-item ImageNet so
it takes a second or two; the notebook cases execute the committed notebooks
headless, as CI does, with STALLSIM_CSV pointing at those sweeps.
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
import stallsim.nb as nb  # noqa: E402

SMALL = ['--set', 'dataset.items=20000', '--epochs', '2']


def sweep(out, *args):
    """Run `stallsim sweep` on imagenet1k at test size into OUT."""
    cmd = [BIN, 'sweep', os.path.join(SRC, 'scenarios', 'imagenet1k.yaml'), *SMALL, *args, '-o', out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f'{" ".join(cmd)}: exit {r.returncode}: {r.stderr}')
    return out


def has_nbconvert():
    return subprocess.run([sys.executable, '-m', 'jupyter', 'nbconvert', '--version'],
                          capture_output=True).returncode == 0


def execute(notebook, out_dir, **env):
    """Execute notebooks/NOTEBOOK as CI does, with ENV added; (exit code, the
    executed notebook's text outputs and error values, stderr)."""
    e = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION='1', **env)
    r = subprocess.run([sys.executable, '-m', 'jupyter', 'nbconvert', '--to', 'notebook', '--execute',
                        '--ExecutePreprocessor.timeout=300', '--output-dir', out_dir,
                        os.path.join(SRC, 'notebooks', notebook)], capture_output=True, text=True, env=e)
    text, pngs = [], 0
    done = os.path.join(out_dir, notebook)
    if os.path.exists(done):
        import nbformat
        for c in nbformat.read(done, 4).cells:
            for o in c.get('outputs', []):
                text.append(o.get('text', '') + o.get('evalue', ''))
                pngs += 'image/png' in o.get('data', {})
    return r.returncode, '\n'.join(text), pngs, r.stderr


class Data(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='stallsim-nb-')
        t = cls.tmp
        # A user's own cores sweep: one axis, server.cpus; the GPU rate is the scenario's.
        cls.cores = sweep(f'{t}/cores.csv', '--variant', 'dali', '--set', 'server.cache_gb=200',
                          '--vary', 'server.cpus=8:64:16')
        # A sweep without the cores notebook's axis.
        cls.cache = sweep(f'{t}/cache.csv', '--variant', 'dali', '--vary', 'server.cache_gb=1,2')
        # jobs.KEY sets every job's KEY: it answers for jobs.0.KEY.
        cls.every = sweep(f'{t}/every.csv', '--variant', 'dali', '--vary', 'jobs.gpu_items_per_s=700,900')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def copy(self, name, edit_csv=None, edit_meta=None):
        """A copy of sweep NAME with its CSV lines and/or its meta text edited."""
        src = getattr(self, name)
        dst = tempfile.mkdtemp(dir=self.tmp) + '/s.csv'
        with open(src) as f:
            lines = f.read().splitlines(True)
        with open(src + '.meta.json') as f:
            meta = f.read()
        with open(dst, 'w') as f:
            f.write(''.join(edit_csv(lines) if edit_csv else lines))
        with open(dst + '.meta.json', 'w') as f:
            f.write(edit_meta(meta) if edit_meta else meta)
        return dst

    def test_own_cores_sweep_loads_typed(self):
        sw = sd.load_sweep(self.cores)
        df = sw.df
        self.assertEqual(sw.varied, ['server.cpus'])
        self.assertEqual(str(df['server.cpus'].dtype), 'int64')
        self.assertEqual(sorted(df['server.cpus'].unique()), [8, 24, 40, 56])
        for col, dtype in (('config', 'int64'), ('epoch', 'int64'), ('epoch_s', 'float64'),
                           ('variant', 'string'), ('source', 'string'), ('approximate', 'bool'),
                           ('storage_read_bytes', 'float64')):
            self.assertEqual(str(df[col].dtype), dtype, col)
        self.assertEqual(len(df), sw.meta.rows)
        self.assertEqual(len(df), 4 * 2 * 2)  # configurations x epochs x sources
        # Not a column: the scenario's value, from the effective configuration.
        self.assertNotIn('jobs.0.gpu_items_per_s', df.columns)
        rate = sw.column('jobs.0.gpu_items_per_s')
        self.assertEqual(set(rate), {700})
        self.assertEqual(str(rate.dtype), 'int64')
        self.assertEqual(sw.value('server.cache_gb'), 200)  # the --set, not the YAML's
        self.assertEqual(sw.value('dataset.items'), 20000)
        with self.assertRaisesRegex(KeyError, 'varied'):
            sw.value('server.cpus')
        self.assertEqual(list(sw.column('server.cpus')), list(df['server.cpus']))
        self.assertIn('server.cache_gb=200', sw.meta.what_ran())
        self.assertIn('variant dali', sw.meta.what_ran())
        sw.require('server.cpus', 'cores.ipynb', '8:192:8')

    def test_every_job_axis_answers_for_the_first_job(self):
        sw = sd.load_sweep(self.every)
        self.assertEqual(sorted(set(sw.column('jobs.0.gpu_items_per_s'))), [700, 900])
        sw.require('jobs.0.gpu_items_per_s', 'x', '1,2')

    def test_missing_axis_says_what_to_add(self):
        sw = sd.load_sweep(self.cache)
        with self.assertRaises(sd.AxisMissing) as e:
            sw.require('server.cpus', 'cores.ipynb', '8:192:8')
        msg = str(e.exception)
        for part in ('cores.ipynb', 'server.cpus', self.cache, 'varies server.cache_gb',
                     'server.cpus=24', '--vary server.cpus=8:192:8'):
            self.assertIn(part, msg)

    def test_concatenated_shards(self):
        t = tempfile.mkdtemp(dir=self.tmp)
        for i in (1, 2):
            sweep(f'{t}/part.{i}.csv', '--variant', 'dali', '--vary', 'server.cpus=8:64:16', '--shard', f'{i}/2')
        with open(f'{t}/all.csv', 'w') as out:
            for i in (1, 2):
                with open(f'{t}/part.{i}.csv') as f:
                    lines = f.readlines()
                out.writelines(lines if i == 1 else lines[1:])
        with self.assertRaisesRegex(sd.DataError, 'copy one shard'):
            sd.load_sweep(f'{t}/all.csv')
        shutil.copy(f'{t}/part.2.csv.meta.json', f'{t}/all.csv.meta.json')
        sw = sd.load_sweep(f'{t}/all.csv')
        self.assertEqual(sorted(sw.df.config.unique()), [0, 1, 2, 3])
        self.assertEqual(len(sw.df), 16)
        self.assertEqual(len(sd.load_sweep(f'{t}/part.1.csv').df), 8)

    def test_one_value_is_no_axis(self):
        sw = sd.load_sweep(sweep(f'{self.tmp}/one.csv', '--variant', 'dali', '--vary', 'server.cpus=8'))
        with self.assertRaisesRegex(sd.AxisMissing, r'over one value \(8\): rerun the sweep with --vary server.cpus=1,2'):
            sw.require('server.cpus', 'x', '1,2')

    def test_malformed_csv(self):
        def bad_value(lines):  # line 3: epoch_s is the 7th field after the one axis
            f = lines[2].split(',')
            f[lines[0].split(',').index('epoch_s')] = 'fast'
            lines[2] = ','.join(f)
            return lines
        with self.assertRaisesRegex(sd.DataError, r's\.csv:3: error: column epoch_s: .fast. is not a number'):
            sd.load_sweep(self.copy('cores', edit_csv=bad_value))
        with self.assertRaisesRegex(sd.DataError, r'15 rows, but .* says the sweep wrote 16'):
            sd.load_sweep(self.copy('cores', edit_csv=lambda l: l[:-1]))
        with self.assertRaisesRegex(sd.DataError, r's\.csv:5: error: empty field'):
            sd.load_sweep(self.copy('cores', edit_csv=lambda l: l[:4] + [l[4].rsplit(',', 3)[0] + '\n'] + l[5:]))
        with self.assertRaisesRegex(sd.DataError, r's\.csv:1: error: header lacks column\(s\) server\.cpus'):
            sd.load_sweep(self.copy('cores', edit_csv=lambda l: [l[0].replace('server.cpus', 'cpus')] + l[1:]))
        with self.assertRaisesRegex(sd.DataError, r's\.csv:2: error: column server\.cpus: .8\.5. is not an integer'):
            sd.load_sweep(self.copy('cores', edit_csv=lambda l: [l[0], l[1].replace(',8,', ',8.5,', 1)] + l[2:]))
        with self.assertRaisesRegex(sd.DataError, 'empty file'):
            sd.load_sweep(self.copy('cores', edit_csv=lambda l: []))
        with self.assertRaisesRegex(sd.DataError, 'no such file'):
            sd.load_sweep(os.path.join(self.tmp, 'nothere.csv'))

    def test_malformed_meta(self):
        with self.assertRaisesRegex(sd.DataError, r'\.meta\.json:\d+:\d+: error: not JSON'):
            sd.load_sweep(self.copy('cores', edit_meta=lambda m: m[:len(m) // 2]))

        def drop(key):
            def edit(m):
                d = json.loads(m)
                del d[key]
                return json.dumps(d)
            return edit
        with self.assertRaisesRegex(sd.DataError, r"meta\.json: error: no 'effective'"):
            sd.load_sweep(self.copy('cores', edit_meta=drop('effective')))
        with self.assertRaisesRegex(sd.DataError, r"no 'axes'"):
            sd.load_sweep(self.copy('cores', edit_meta=drop('axes')))
        with self.assertRaisesRegex(sd.DataError, r"status is 'running'"):
            sd.load_sweep(self.copy('cores', edit_meta=lambda m: m.replace('"complete"', '"running"')))
        with self.assertRaisesRegex(sd.DataError, r"'rows' is '16': expected an integer"):
            sd.load_sweep(self.copy('cores', edit_meta=lambda m: m.replace('"rows": 16', '"rows": "16"')))
        with self.assertRaisesRegex(sd.DataError, r"variant\(s\) \['dali'\] have no effective"):
            sd.load_sweep(self.copy('cores', edit_meta=lambda m: m.replace('"dali":', '"other":')))
        path = self.copy('cores')
        os.remove(path + '.meta.json')
        with self.assertRaisesRegex(sd.DataError, r'meta\.json: error: no such file'):
            sd.load_sweep(path)

    def test_run_outputs(self):
        scen = os.path.join(SRC, 'scenarios', 'imagenet1k.yaml')
        runs = {}
        for fmt in ('json', 'csv'):
            path = os.path.join(self.tmp, f'run.{fmt}')
            with open(path, 'w') as f:
                subprocess.run([BIN, 'run', scen, *SMALL, '--format', fmt], stdout=f, check=True)
            runs[fmt] = sd.load_run(path)
        j, c = runs['json'], runs['csv']
        self.assertEqual(len(j.df), len(c.df))
        self.assertGreater(len(c.df), 0)
        self.assertEqual(list(c.df['epoch']), list(j.df['epoch']))
        self.assertEqual(str(j.df['epoch_s'].dtype), 'float64')
        self.assertEqual(str(c.df['approximate'].dtype), 'bool')
        self.assertEqual(list(c.df['approximate']), list(j.df['approximate']))
        self.assertEqual(c.configs, {})
        self.assertEqual(j.configs['dali'].get('dataset.items'), 20000)
        self.assertEqual(j.configs['dali'].get('jobs.0.gpu_items_per_s'), 700)
        bad = os.path.join(self.tmp, 'bad.json')
        with open(bad, 'w') as f:
            f.write('{"variants": [{"name": "x"}]}')
        with self.assertRaisesRegex(sd.DataError, 'not `stallsim run --format json` output'):
            sd.load_run(bad)

    def test_param_order(self):
        os.environ['STALLSIM_EPOCH'] = '3'
        try:
            self.assertEqual(nb.param('epoch', None, None, int), 3)
            self.assertEqual(nb.param('epoch', 1, None, int), 1)  # the cell (papermill) wins
            os.environ['STALLSIM_EPOCH'] = 'x'
            with self.assertRaisesRegex(sd.DataError, 'STALLSIM_EPOCH'):
                nb.param('epoch', None, None, int)
        finally:
            del os.environ['STALLSIM_EPOCH']
        self.assertEqual(nb.param('epoch', None, 2, int), 2)

    def test_notebooks_import_the_package(self):
        """The notebooks' `import stallsim_nb as nb` (notebooks/stallsim_nb.py)
        is the package's stallsim.nb itself, not a copy."""
        sys.path.insert(0, os.path.join(SRC, 'notebooks'))
        try:
            import stallsim_nb
        finally:
            sys.path.remove(os.path.join(SRC, 'notebooks'))
        self.assertIs(stallsim_nb, nb)
        self.assertIs(stallsim_nb.load_sweep, sd.load_sweep)

    @unittest.skipUnless(has_nbconvert(), "jupyter nbconvert is missing (scripts/setup.sh --notebooks)")
    def test_cores_notebook_on_own_sweep(self):
        out = tempfile.mkdtemp(dir=self.tmp)
        rc, text, pngs, err = execute('cores.ipynb', out, STALLSIM_CSV=self.cores)
        self.assertEqual(rc, 0, err[-1500:])
        self.assertIn('varied: server.cpus', text)
        self.assertIn('resnet50, 700 items/s per GPU', text)
        self.assertEqual(pngs, 1)

    @unittest.skipUnless(has_nbconvert(), "jupyter nbconvert is missing (scripts/setup.sh --notebooks)")
    def test_cores_notebook_missing_axis(self):
        out = tempfile.mkdtemp(dir=self.tmp)
        rc, text, pngs, err = execute('cores.ipynb', out, STALLSIM_CSV=self.cache)
        self.assertNotEqual(rc, 0)
        tail = err[-1500:]  # nbconvert's own traceback comes first, the cell's error last
        self.assertIn('AxisMissing: cores.ipynb plots against server.cpus', tail, tail)
        self.assertIn('--vary server.cpus=8:192:8', tail, tail)
        self.assertNotIn('KeyError', err, tail)


if __name__ == '__main__':
    unittest.main(verbosity=2)
