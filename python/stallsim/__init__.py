"""stallsim's Python side; the simulator is the C program `stallsim`.

stallsim.probe      the PyTorch probe (the `stallsim-probe` command): times
                    your Dataset in a real DataLoader and writes a host profile
                    for loader.kind: pytorch (docs/pytorch.md)
stallsim.watch      a few lines in your training loop (for batch in
                    watch(loader): ...) that measure its waits and steps
                    and write a measured profile for `stallsim compare`
                    (docs/watch.md)
stallsim.pipeline   the Datasets and transforms the probe times
stallsim.data       stallsim's sweeps and runs as typed pandas tables
                    (docs/outputs.md, "Notebooks")
stallsim.nb         the figure helpers the notebooks in notebooks/ share

Nothing is imported here: each module needs only what it uses (PyTorch,
pandas, matplotlib), when it uses it."""

# The same as project(stallsim VERSION ...) in CMakeLists.txt (ctest pypkg checks).
__version__ = "0.1.0"
