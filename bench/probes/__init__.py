"""One-off probes behind figures quoted in docs/ (each names its page): run one when that figure
needs measuring again, `python -m bench.probes.NAME`. Not part of `kenning bench`.
"""
