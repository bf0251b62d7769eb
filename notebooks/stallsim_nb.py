"""stallsim_nb: what every notebook here needs from a sweep.

load(NAME) reads notebooks/data/NAME (the CSV of `stallsim sweep`) and its
metadata, and returns a Sweep: the rows, the metadata, and the effective
configuration of each variant the sweep ran, as `stallsim sweep` recorded it
(host profile, --set and defaults applied). Values come from there or from
the CSV's columns, never from re-reading the scenario's YAML, which lacks
the host profile, --set and every default.
"""
import json
import os

import pandas as pd

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')


class Sweep:
    def __init__(self, df, meta):
        self.df = df
        self.meta = meta
        self.effective = meta['effective']  # variant -> flat key -> value, plus 'jobs'
        self.varied = [a['key'] for a in meta['axes'] if a['key'] != 'variant']

    def config(self, variant=None):
        """The effective configuration of a variant (the first when None)."""
        if variant is None:
            variant = next(iter(self.effective))
        return self.effective[variant]

    def value(self, key, variant=None):
        """A key's value in the configuration the sweep ran: scenario keys by
        their dotted name, job keys as jobs.N.KEY. A varied key has no single
        value: ask the rows (df[key]) instead."""
        if key in self.varied:
            raise KeyError(f'{key} is varied by this sweep: read it from the rows, df[{key!r}]')
        cfg = self.config(variant)
        if key.startswith('jobs.'):
            _, n, k = key.split('.', 2)
            return cfg['jobs'][int(n)][k]
        return cfg[key]

    def column(self, key, variant=None):
        """A key's value per row: the varied column, or the configured value."""
        if key in self.df.columns:
            return self.df[key]
        return pd.Series(self.value(key, variant), index=self.df.index)


def load(name):
    """The sweep notebooks/data/NAME and its metadata."""
    path = os.path.join(DATA, name)
    with open(path + '.meta.json') as f:
        meta = json.load(f)
    if 'effective' not in meta:
        raise ValueError(f'{path}.meta.json has no effective configuration: rerun the sweep '
                         '(scripts/sweeps.sh) with this stallsim')
    return Sweep(pd.read_csv(path), meta)


def steady(df):
    """The last epoch of each configuration: the steady state a user plans with."""
    return df[df.epoch == df.epoch.max()]
