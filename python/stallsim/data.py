"""stallsim.data: stallsim's outputs as typed pandas tables.

    from stallsim.data import load_sweep, load_run
    sw = load_sweep('data/cores.csv')     # a `stallsim sweep` CSV and its .meta.json
    sw.df                                  # one row per config x variant x job x epoch x source
    sw.meta.axes, sw.meta.effective        # what was varied, the configuration that ran
    sw.column('jobs.0.gpu_items_per_s')    # per row: the varied value, or the configured one
    run = load_run('out.json')             # `stallsim run --format json` (or csv)

Every column has an explicit dtype (RESULT_DTYPES; a varied key's column is
int64, float64, bool or string from the values the metadata lists), so a
malformed file fails here, naming the file, line and column, instead of
drawing a wrong figure. Values that are not in the rows come from the
effective configuration the sweep recorded (host profile, --set and defaults
applied), never from re-reading the scenario's YAML. Needs pandas only.
"""
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

import pandas as pd

# The result columns of `run --format csv` (and of every sweep row after its
# axes), with the dtype each is read as.
RESULT_DTYPES: Dict[str, str] = {
    'variant': 'string',
    'job': 'string',
    'epoch': 'int64',
    'source': 'string',
    'epoch_s': 'float64',
    'throughput_items_s': 'float64',
    'gpu_util': 'float64',
    'prep_stall_s': 'float64',
    'fetch_stall_s': 'float64',
    'hit_rate': 'float64',
    'remote_hit_rate': 'float64',
    'storage_read_bytes': 'float64',  # the model's are expectations, not whole bytes
    'network_bytes': 'float64',
    'cpu_util': 'float64',
    'storage_util': 'float64',
    't_gpu_s': 'float64',
    't_prep_s': 'float64',
    'bottleneck': 'string',
    'approximate': 'bool',
    'staged_bytes': 'float64',
    'storage_requests': 'float64',
    'shards_per_batch': 'float64',
    'tier_hit_rate': 'float64',
    'storage_heads': 'float64',
    'storage_retries': 'float64',
    'storage_lists': 'float64',
    'first_step_s': 'float64',  # launch to the first step (docs/startup.md)
    'startup_s': 'float64',
    'startup_requests': 'float64',
    'startup_throttled': 'float64',
    'startup_lists': 'float64',
    'startup_heads': 'float64',
    'startup_gets': 'float64',
    'startup_approximate': 'bool',
    'resume_s': 'float64',
    'checkpoint_s': 'float64',  # the GPUs waiting on checkpoints (docs/goodput.md)
    'vs_model': 'float64',  # the simulator's difference from the model, a signed fraction
    'model_differs': 'bool',
    # goodput (docs/goodput.md): where a variant checkpoints or fails, the run's
    # figures of the row's source on each of its epochs' rows
    'goodput': 'float64',
    'goodput_restarts': 'float64',
    'goodput_lost_s': 'float64',
    'goodput_restart_s': 'float64',
    'goodput_checkpoint_s': 'float64',
    'goodput_best_every_steps': 'float64',
    'useful_epoch_s': 'float64',
    'cost_per_useful_epoch_usd': 'float64',
}
# Result columns left empty where the figure does not exist (no work kept
# over the horizon, no prices): read as NaN.
OPTIONAL = ('useful_epoch_s', 'cost_per_useful_epoch_usd')
# Result columns that may be negative (the rest are >= 0).
SIGNED = ('vs_model',)
# What stallsim's figures can be: shares lie in [0, 1], the other result
# numbers are >= 0, epochs count from 1 (SLACK: the float noise the model's
# differences leave, -1e-12 s stalls). A value outside is a damaged or foreign
# file, refused as one, not drawn.
SHARES = ('gpu_util', 'hit_rate', 'remote_hit_rate', 'tier_hit_rate', 'goodput')
SLACK = 1e-6
# The columns every reader here relies on; later columns a newer stallsim adds
# are read as numbers when they all parse, else as strings.
REQUIRED = ('variant', 'job', 'epoch', 'source', 'epoch_s', 'throughput_items_s',
            'prep_stall_s', 'fetch_stall_s', 'hit_rate')


class DataError(ValueError):
    """A file that is not what stallsim writes (or not there): the message
    names the file and what was expected."""


class AxisMissing(DataError):
    """A notebook needs a key varied that this sweep does not vary."""


@dataclass(frozen=True)
class Axis:
    key: str                # canonical key (jobs.0.gpus; 'variant' for --vary variant=...)
    column: str             # the CSV column holding it ('' for variant: the variant column)
    values: Tuple[str, ...]  # as the sweep listed them


@dataclass(frozen=True)
class Config:
    """One variant's effective configuration: flat dotted keys, and the jobs."""
    variant: str
    values: Mapping[str, Any]
    jobs: Tuple[Mapping[str, Any], ...]

    def get(self, key: str) -> Any:
        """A key by its dotted name; job keys as jobs.N.KEY (or jobs.KEY: the first job's)."""
        if key.startswith('jobs.'):
            parts = key.split('.')
            n, k = (int(parts[1]), '.'.join(parts[2:])) if parts[1].isdigit() else (0, '.'.join(parts[1:]))
            if n >= len(self.jobs) or k not in self.jobs[n]:
                raise KeyError(f'{key}: variant {self.variant} has {len(self.jobs)} job(s) '
                               f'with keys {sorted(self.jobs[0]) if self.jobs else []}')
            return self.jobs[n][k]
        if key not in self.values:
            raise KeyError(f'{key}: not a key of the effective configuration of variant {self.variant}')
        return self.values[key]


@dataclass(frozen=True)
class SweepMeta:
    """OUT.csv.meta.json, as `stallsim sweep` writes it."""
    path: str
    status: str
    stallsim_version: str
    scenario: str
    seed: int
    command_line: Tuple[str, ...]
    model_only: bool
    grid_size: int
    shard: str
    configs: Tuple[int, int]
    rows: int
    axes: Tuple[Axis, ...]
    effective: Mapping[str, Config]

    def option(self, flag: str) -> List[str]:
        """Every value given to FLAG (--set, --variant, --epochs) on the command line."""
        cl = self.command_line
        return [cl[i + 1] for i in range(len(cl) - 1) if cl[i] == flag]

    def what_ran(self) -> str:
        """The scenario and what changed it, for a figure's title:
        'imagenet1k.yaml, variant dali, server.cache_gb=200'."""
        parts = [os.path.basename(self.scenario)]
        variants = [v for v in self.effective]
        parts.append(('variant ' if len(variants) == 1 else 'variants ') + ', '.join(variants))
        parts += self.option('--set')
        if self.model_only:
            parts.append('model only')
        return ', '.join(parts)


@dataclass
class Sweep:
    path: str
    df: pd.DataFrame
    meta: SweepMeta

    @property
    def varied(self) -> List[str]:
        """The keys this sweep varies (variant included when it is an axis)."""
        return [a.key for a in self.meta.axes]

    @property
    def variants(self) -> List[str]:
        return list(self.meta.effective)

    def config(self, variant: Optional[str] = None) -> Config:
        """The effective configuration of a variant (the first when None)."""
        if variant is None:
            variant = self.variants[0]
        if variant not in self.meta.effective:
            raise KeyError(f'variant {variant!r}: this sweep ran {self.variants}')
        return self.meta.effective[variant]

    def axis(self, key: str) -> Optional[Axis]:
        """The axis that sets KEY, if any. jobs.KEY sets every job's KEY, so it
        answers for jobs.N.KEY too."""
        for a in self.meta.axes:
            if a.key == key:
                return a
        if key.startswith('jobs.'):
            parts = key.split('.')
            if parts[1].isdigit():
                every = 'jobs.' + '.'.join(parts[2:])
                for a in self.meta.axes:
                    if a.key == every:
                        return a
        return None

    def value(self, key: str, variant: Optional[str] = None) -> Any:
        """A key's single value in the configuration the sweep ran. A varied
        key has none: ask column(key) for its value per row."""
        if self.axis(key) is not None:
            raise KeyError(f'{key} is varied by this sweep ({self.path}): '
                           f'read it per row with column({key!r})')
        return self.config(variant).get(key)

    def column(self, key: str) -> pd.Series:
        """KEY's value on every row: its column where the sweep varies it, else
        the effective configuration of each row's variant."""
        if key == 'variant':
            return self.df['variant']
        a = self.axis(key)
        if a is not None and a.key != 'variant':
            return self.df[a.column]
        per_variant = {v: c.get(key) for v, c in self.meta.effective.items()}
        s = self.df['variant'].map(per_variant)
        kinds = {type(v) for v in per_variant.values()}
        if kinds <= {int}:
            return s.astype('int64')
        if kinds <= {int, float}:
            return s.astype('float64')
        if kinds <= {bool}:
            return s.astype('bool')
        return s.astype('string')

    def require(self, key: str, notebook: str, example: str) -> None:
        """Raise AxisMissing, saying what to add, unless this sweep varies KEY
        (with more than one value)."""
        a = self.axis(key)
        if a is not None and len(a.values) > 1:
            return
        if a is not None:
            raise AxisMissing(f'{notebook} plots against {key}, but {self.path} varies it over one '
                              f'value ({a.values[0]}): rerun the sweep with --vary {key}={example}')
        try:
            ran = f'; every row ran {key}={self.config().get(key)}'
        except KeyError:
            ran = ''
        varies = ', '.join(self.varied) or 'nothing'
        raise AxisMissing(
            f'{notebook} plots against {key}, but {self.path} varies {varies}{ran}. '
            f'Rerun the sweep with --vary {key}={example} (beside your other --vary), '
            f'or point STALLSIM_CSV at a sweep that varies it.')


def _fail(path: str, msg: str) -> DataError:
    return DataError(f'{path}: error: {msg}')


def _numeric(path: str, col: str, raw: pd.Series, dtype: str, line0: int) -> pd.Series:
    """RAW (strings) as DTYPE, or a DataError naming the first bad line."""
    if dtype == 'string':
        return raw.astype('string')
    if dtype == 'bool':
        ok = raw.isin(['0', '1', 'true', 'false'])
        if not ok.all():
            i = int((~ok).to_numpy().argmax())
            raise _fail(f'{path}:{line0 + i}', f'column {col}: {raw.iloc[i]!r} is not 0/1 or true/false')
        return raw.isin(['1', 'true']).astype('bool')
    num = pd.to_numeric(raw, errors='coerce')
    # inf, 1e999 and nan parse as floats; stallsim never writes them.
    bad = num.isna() | ~num.abs().lt(math.inf)
    if col in OPTIONAL:
        bad &= raw != ''
    if dtype == 'int64':
        bad |= (num % 1 != 0) | ~num.abs().lt(2.0 ** 53)
    if bad.any():
        i = int(bad.to_numpy().argmax())
        kind = 'an integer' if dtype == 'int64' else \
            'a number' if pd.isna(num.iloc[i]) else 'a finite number'
        raise _fail(f'{path}:{line0 + i}', f'column {col}: {raw.iloc[i]!r} is not {kind}')
    out = num.astype(dtype)
    _check_range(f'{path}:{line0}', col, out, lambda i: f'{path}:{line0 + i}')
    return out


def _check_range(where: str, col: str, values: pd.Series, at) -> None:
    """A result column's values within what stallsim writes (SHARES in [0, 1],
    epochs >= 1, other figures >= 0), or a DataError at(i) names the first."""
    if col not in RESULT_DTYPES or RESULT_DTYPES[col] not in ('float64', 'int64'):
        return
    if col in SIGNED:
        return
    lo, hi = (1, math.inf) if col == 'epoch' else (-SLACK, 1 + SLACK) if col in SHARES \
        else (-SLACK, math.inf)
    bad = (values < lo) | (values > hi)
    if bad.any():
        i = int(bad.to_numpy().argmax())
        want = 'an epoch, 1 or more' if col == 'epoch' else \
            'a share in [0, 1]' if col in SHARES else '0 or more'
        raise _fail(at(i), f'column {col}: {values.iloc[i]!r} is out of range: expected {want}')


def _load_json(path: str, text: str) -> Any:
    """TEXT as JSON, or a DataError: not JSON, NaN or Infinity (JSON has
    neither; Python's parser takes them), or nested deeper than Python's
    parser recurses (stallsim's files nest 4 deep)."""

    def constant(name: str):
        raise _fail(path, f'{name} is not a JSON number (stallsim never writes it)')
    try:
        return json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise _fail(f'{path}:{e.lineno}:{e.colno}', f'not JSON: {e.msg}') from None
    except RecursionError:
        raise _fail(path, 'nested too deep for a JSON parser: not a file stallsim '
                          'writes') from None


def _axis_dtype(values: Tuple[str, ...]) -> str:
    """The dtype a varied key's column is read as, from the values the sweep lists."""
    def parses(cast) -> bool:
        try:
            for v in values:
                if not math.isfinite(cast(v)):
                    return False
            return True
        except ValueError:
            return False
    if values and parses(int):
        return 'int64'
    if values and parses(float):
        return 'float64'
    if values and set(values) <= {'true', 'false'}:
        return 'bool'
    return 'string'


def _read_rows(path: str, leading: Dict[str, str]) -> pd.DataFrame:
    """A stallsim CSV: LEADING columns (name -> dtype) first, then the result
    columns; every value converted to its dtype or a DataError."""
    if not os.path.isfile(path):
        raise _fail(path, 'no such file (a relative path is taken from the folder the '
                          'notebook runs in, notebooks/ for the shipped ones: give an '
                          'absolute path)')
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise _fail(path, 'empty file: expected a stallsim CSV with a header line') from None
    except pd.errors.ParserError as e:
        raise _fail(path, f'not a stallsim CSV: {e}') from None
    want = list(leading) + [c for c in REQUIRED]
    missing = [c for c in want if c not in raw.columns]
    if missing:
        raise _fail(f'{path}:1', f'header lacks column(s) {", ".join(missing)} '
                                 f'(has {", ".join(raw.columns)})')
    # A short line leaves its last fields empty; an empty field is never valid
    # (but in OPTIONAL's columns, none of them last).
    empty = (raw.drop(columns=[c for c in OPTIONAL if c in raw.columns]) == '').any(axis=1)
    if empty.any():
        i = int(empty.to_numpy().argmax())
        cols = [c for c in raw.columns if raw.iloc[i][c] == '']
        raise _fail(f'{path}:{i + 2}', f'empty field(s) {", ".join(cols)} (a truncated or '
                                       'hand-edited line?)')
    out = {}
    for col in raw.columns:
        dtype = leading.get(col) or RESULT_DTYPES.get(col)
        if dtype is None:  # a column a newer stallsim added
            dtype = 'float64' if pd.to_numeric(raw[col], errors='coerce').notna().all() else 'string'
        out[col] = _numeric(path, col, raw[col], dtype, 2)
    return pd.DataFrame(out, columns=list(raw.columns))


def _config(path: str, variant: str, obj: Any) -> Config:
    if not isinstance(obj, dict) or not isinstance(obj.get('jobs'), list) \
            or not all(isinstance(j, dict) for j in obj['jobs']):
        raise _fail(path, f'effective configuration of variant {variant!r} is not an object '
                          'with a jobs list of objects')
    values = {k: v for k, v in obj.items() if k != 'jobs'}
    return Config(variant, values, tuple(dict(j) for j in obj['jobs']))


def _get(path: str, meta: dict, key: str, kind, what: str):
    if key not in meta:
        raise _fail(path, f'no {key!r} ({what}): written by an older stallsim? rerun the sweep')
    v = meta[key]
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise _fail(path, f'{key!r} is {v!r}: expected {what}')
    return v


def _read_text(path: str) -> str:
    """The file as UTF-8 text, or a DataError (bytes that are not UTF-8, a
    file that cannot be read)."""
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise _fail(path, f'byte {e.start} is not UTF-8: not a file stallsim writes') from None
    except OSError as e:
        raise _fail(path, f'cannot read: {e.strerror}') from None


def load_meta(path: str) -> SweepMeta:
    """PATH, a sweep's OUT.csv.meta.json."""
    if not os.path.isfile(path):
        raise _fail(path, 'no such file: a sweep written with -o OUT.csv leaves its metadata '
                          'beside it (not with -o -, nor from a stallsim older than "effective"; '
                          'for shards concatenated into OUT.csv, copy one shard\'s .meta.json '
                          'to OUT.csv.meta.json)')
    meta = _load_json(path, _read_text(path))
    if not isinstance(meta, dict):
        raise _fail(path, 'expected a JSON object')
    axes = []
    for i, a in enumerate(_get(path, meta, 'axes', list, 'a list of axes')):
        if not (isinstance(a, dict) and isinstance(a.get('key'), str)
                and isinstance(a.get('column', ''), str) and isinstance(a.get('values'), list)):
            raise _fail(path, f'axes[{i}] is {a!r}: expected key, column and values')
        col = a.get('column', '') if a['key'] != 'variant' else ''
        axes.append(Axis(a['key'], col, tuple(str(v) for v in a['values'])))
    eff = _get(path, meta, 'effective', dict, "each variant's effective configuration")
    if not eff:
        raise _fail(path, "'effective' names no variant")
    for key, least in (('grid_size', 1), ('rows', 0), ('seed', 0)):
        if _get(path, meta, key, int, 'an integer') < least:
            raise _fail(path, f'{key!r} is {meta[key]!r}: expected an integer >= {least}')
    configs = _get(path, meta, 'configs', list, 'the [first, end) configurations written')
    grid_size = meta['grid_size']
    if len(configs) != 2 or not all(isinstance(c, int) and not isinstance(c, bool)
                                    for c in configs) \
            or not 0 <= configs[0] <= configs[1] <= grid_size:
        raise _fail(path, f"'configs' is {configs!r}: expected [first, end) within the grid of "
                          f'{grid_size}')
    status = _get(path, meta, 'status', str, 'running or complete')
    if status not in ('running', 'complete'):
        raise _fail(path, f"'status' is {status!r}: expected running or complete")
    shard = _get(path, meta, 'shard', str, 'I/N')
    parts = shard.split('/')
    if len(parts) != 2 or not all(p.isdigit() for p in parts) \
            or not 1 <= int(parts[0]) <= int(parts[1]):
        raise _fail(path, f"'shard' is {shard!r}: expected I/N with 1 <= I <= N")
    command_line = _get(path, meta, 'command_line', list, 'the arguments')
    if not all(isinstance(a, str) for a in command_line):
        raise _fail(path, "'command_line' holds a value that is not a string")
    return SweepMeta(
        path=path,
        status=_get(path, meta, 'status', str, 'running or complete'),
        stallsim_version=_get(path, meta, 'stallsim_version', str, 'a version string'),
        scenario=_get(path, meta, 'scenario', str, 'the scenario file'),
        seed=_get(path, meta, 'seed', int, 'an integer'),
        command_line=tuple(_get(path, meta, 'command_line', list, 'the arguments')),
        model_only=_get(path, meta, 'model_only', bool, 'true or false'),
        grid_size=_get(path, meta, 'grid_size', int, 'an integer'),
        shard=_get(path, meta, 'shard', str, 'I/N'),
        configs=(configs[0], configs[1]),
        rows=_get(path, meta, 'rows', int, 'an integer'),
        axes=tuple(axes),
        effective={v: _config(path, v, c) for v, c in eff.items()},
    )


def load_sweep(path: str) -> Sweep:
    """A `stallsim sweep -o PATH` output: the CSV, typed, and PATH.meta.json."""
    meta = load_meta(path + '.meta.json')
    if meta.status != 'complete':
        raise _fail(meta.path, f"status is {meta.status!r}: the sweep has not finished "
                               '(rerun it with the same arguments to resume)')
    leading = {'config': 'int64'}
    for a in meta.axes:
        if a.key != 'variant':
            leading[a.column] = _axis_dtype(a.values)
    df = _read_rows(path, leading)
    first, end = int(df['config'].min()) if len(df) else 0, int(df['config'].max()) + 1 if len(df) else 0
    if meta.shard != '1/1' and (first, end) != meta.configs:
        # Shards concatenated into one file, beside one shard's metadata (the
        # recipe in docs/outputs.md): every shard has the same axes and configuration.
        if first < 0 or end > meta.grid_size:
            raise _fail(path, f'configurations {first} to {end - 1} lie outside the grid of '
                              f'{meta.grid_size} that {meta.path} describes')
    elif len(df) != meta.rows:
        raise _fail(path, f'{len(df)} rows, but {meta.path} says the sweep wrote {meta.rows} '
                          '(a truncated or concatenated file? rerun the sweep)')
    unknown = sorted(set(df['variant'].unique()) - set(meta.effective))
    if unknown:
        raise _fail(path, f'variant(s) {unknown} have no effective configuration in {meta.path} '
                          '(the CSV and its metadata are from different sweeps)')
    return Sweep(path, df, meta)


@dataclass
class Run:
    """`stallsim run --format json|csv` output: the same rows as a sweep's
    (no config column), and each variant's configuration (JSON only)."""
    path: str
    df: pd.DataFrame
    configs: Mapping[str, Config]


def load_run(path: str) -> Run:
    """PATH, a `stallsim run` output: --format json (a .json file, or any file
    starting with '{') or --format csv."""
    if not os.path.isfile(path):
        raise _fail(path, 'no such file')
    text = _read_text(path)
    if text[:1] != '{':
        return Run(path, _read_rows(path, {}), {})
    doc = _load_json(path, text)
    if not isinstance(doc, dict) or not isinstance(doc.get('variants'), list):
        raise _fail(path, "no 'variants' list: expected `stallsim run --format json` output")
    rows, configs = [], {}
    try:
        for v in doc['variants']:
            configs[v['name']] = _config(path, v['name'], v['config'])
            for j in v['jobs']:
                for e in j['epochs']:
                    for source in ('model', 'sim'):
                        if source in e:
                            rows.append({'variant': v['name'], 'job': j['name'], 'epoch': e['epoch'],
                                         'source': source, **e[source]})
    except (KeyError, TypeError) as e:
        raise _fail(path, f'not `stallsim run --format json` output: missing or malformed {e}') from None
    df = pd.DataFrame(rows)
    out = {}
    for col in df.columns:
        dtype = RESULT_DTYPES.get(col, 'float64')
        # astype would take "12", true and null as numbers: each value must
        # already be of the column's JSON type.
        want = {'string': (str,), 'bool': (bool,), 'int64': (int,)}.get(dtype, (int, float))
        for i, v in enumerate(df[col]):
            if not isinstance(v, want) or (dtype != 'bool' and isinstance(v, bool)) \
                    or (isinstance(v, float) and not math.isfinite(v)):
                raise _fail(path, f'{col}: {v!r} (row {i + 1}) is not {dtype}')
        out[col] = df[col].astype(dtype)
        _check_range(path, col, out[col], lambda i: f'{path} (row {i + 1})')
    return Run(path, pd.DataFrame(out, columns=list(df.columns)), configs)


def steady(df: pd.DataFrame, epoch: Optional[int] = None) -> pd.DataFrame:
    """The rows of one epoch: EPOCH, or the last (the steady state a user plans with)."""
    last = int(df['epoch'].max())
    if epoch is None:
        epoch = last
    if not 1 <= epoch <= last:
        raise DataError(f'epoch {epoch}: the data hold epochs 1 to {last}')
    return df[df['epoch'] == epoch]

