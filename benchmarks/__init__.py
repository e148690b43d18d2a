"""Speed and quality measurements of Annotagent's indexing and retrieval.

`python -m benchmarks` (`./run bench`) measures speed and memory; `python -m benchmarks.evaluate`
(`./run eval`) measures retrieval quality on a labelled question set. Both run against their own
data folder under `.data/` with their own embedded chunk index, never the developer's data, and
keep their last results in `benchmarks/results/`.
"""
