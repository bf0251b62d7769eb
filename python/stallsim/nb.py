"""stallsim.nb: what every notebook in notebooks/ shares beyond the data
(they `import stallsim_nb as nb`: notebooks/stallsim_nb.py brings this module).

Each notebook's first code cell, tagged `parameters` (papermill's convention:
`papermill cores.ipynb out.ipynb -p csv /path/my.csv` sets them), leaves every
parameter None; param() then takes, in order, the value the cell was given,
the environment (STALLSIM_<NAME>: STALLSIM_CSV=/path/my.csv jupyter nbconvert
--execute ...) or the notebook's default. The data come from stallsim.data
(typed tables and each sweep's effective configuration); the figure helpers
below keep the notebooks' axes, ticks and titles alike.
"""
import glob
import os

import numpy as np

from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

# What the notebooks use of the data, under nb.: load_sweep, steady, the errors.
from stallsim.data import AxisMissing, DataError, Sweep, load_run, load_sweep, steady  # noqa: F401


def param(name, value, default, cast=str):
    """NAME's value: VALUE when the parameters cell set it, else $STALLSIM_NAME
    (converted by CAST), else DEFAULT."""
    if value is not None:
        return value
    env = 'STALLSIM_' + name.upper()
    raw = os.environ.get(env)
    if raw is None or raw == '':
        return default
    try:
        return cast(raw)
    except ValueError:
        raise DataError(f'{env}={raw!r}: expected {getattr(cast, "__name__", cast)}') from None


def paths(pattern):
    """The files PATTERN names: a glob, or several separated by os.pathsep (':')."""
    out = []
    for p in str(pattern).split(os.pathsep):
        hits = sorted(glob.glob(p))
        out += hits if hits else [p]  # a missing file is load_sweep's clear error
    return out


def plain_number(x, _pos=None):
    """A tick label without exponent: 2000, 500, 0.5."""
    return f'{x:,.0f}' if abs(x) >= 1 else f'{x:g}'


def log_axis(ax, which='y', base=10):
    """A log axis labelled in plain numbers at 1-2-5 steps (base 10) or at every
    power (base 2), so a reader does not have to interpolate between 10^3 and 10^4."""
    axis = ax.yaxis if which == 'y' else ax.xaxis
    (ax.set_yscale if which == 'y' else ax.set_xscale)('log', base=base)
    if base == 10:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10))))
    else:
        axis.set_major_locator(LogLocator(base=base))
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_formatter(NullFormatter())


def from_zero(*axes):
    """Y axes from 0 to a little above the highest line of any of AXES, so a
    flat line is not drawn on the frame."""
    ys = [np.nanmax(np.asarray(l.get_ydata(), float)) for ax in axes for l in ax.get_lines()
          if len(l.get_ydata()) and l.get_transform() is ax.transData]  # not axvline
    top = max(ys, default=0)
    for ax in axes:
        ax.set_ylim(0, top * 1.08 if top > 0 else 1)


def source_styles():
    """Simulator solid with markers, model dashed: the same in every figure."""
    return (('sim', dict(ls='-', marker='o', ms=4)), ('model', dict(ls='--', marker=None)))


def finish(fig, title):
    """The figure's own title (what was run), then a layout that keeps it."""
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()


# How a legend names a varied key's value: (what it is, its unit).
NAMES = {
    'jobs.0.gpu_items_per_s': ('GPU rate', 'items/s per GPU'),
    'jobs.gpu_items_per_s': ('GPU rate', 'items/s per GPU'),
    'server.cache_gb': ('cache', 'GB per server'),
    'server.cpus': ('prep cores', 'per server'),
    'server.count': ('servers', ''),
    'server.gpus': ('GPUs', 'per server'),
    'jobs.0.count': ('jobs', ''),
    'jobs.0.gpus': ('GPUs', 'per job'),
    'loader.cache': ('cache policy', ''),
    'server.storage.read_mb_s': ('storage', 'MB/s'),
}


def describe(key, value):
    """'GPU rate 700 items/s per GPU', 'variant dali', 'prep.on_gpu=true'."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if key == 'variant':
        return f'variant {value}'
    if key in NAMES:
        what, unit = NAMES[key]
        return f'{what} {value} {unit}'.rstrip()
    return f'{key}={value}'


def series(sw, df, exclude):
    """DF's rows, one group per combination of the variants and the sweep's
    varied keys other than EXCLUDE, each as (label, rows); one unlabelled
    group when none."""
    # A sweep runs every variant of its scenario unless --variant picks some:
    # variants are a series whether or not --vary variant=... made them one.
    keys = ['variant'] if 'variant' not in exclude and df['variant'].nunique() > 1 else []
    for a in sw.meta.axes:
        if a.key in exclude or a.column in exclude or a.key == 'variant':
            continue
        if df[a.column].nunique() > 1:
            keys.append(a.column)
    if not keys:
        return [('', df)]
    out = []
    for vals, g in df.groupby(keys if len(keys) > 1 else keys[0], sort=True):
        vals = vals if isinstance(vals, tuple) else (vals,)
        out.append((vals, ', '.join(describe(k, v) for k, v in zip(keys, vals)), g))
    if keys[0] == 'variant':  # the scenario's order (the baseline first), not the alphabet's
        order = {v: i for i, v in enumerate(sw.variants)}
        out.sort(key=lambda t: (order.get(t[0][0], len(order)),) + tuple(t[0][1:]))
    return [(label, g) for _, label, g in out]


def style_legend(ax, extra=(), **kw):
    """A legend of line styles alone (simulator, model, EXTRA (label, style dict)),
    in grey, so the colours' legend stays short."""
    names = {'sim': 'simulator', 'model': 'analytical model'}
    handles = [Line2D([], [], color='0.35', label=names[s], **st) for s, st in source_styles()]
    handles += [Line2D([], [], color='0.35', label=label, **st) for label, st in extra]
    ax.add_artist(ax.legend(handles=handles, fontsize=8, **kw))


def colour_legend(ax, labels, title=None, **kw):
    """A legend of colours C0, C1, ... for LABELS."""
    handles = [Line2D([], [], color=f'C{i}', lw=2, label=l) for i, l in enumerate(labels)]
    ax.add_artist(ax.legend(handles=handles, fontsize=8, title=title, title_fontsize=8, **kw))
