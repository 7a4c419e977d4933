"""Runs one peer deduplicator over the JSON lines shards that
`cmd/quality --shards` writes ({"id": doc ID, "text": ...}) and writes its
clusters as a CSV of id,cluster, which `cmd/quality --clusters` scores.

    python peers.py TOOL --shards DIR --work DIR --out FILE [--threshold T] [--ngram N] [--workers W]

Each tool is run as its own documentation shows, with 10-word shingles
(neardup's w) and its LSH tuned to the same resemblance threshold:

- datatrove: FineWeb's MinHash pipeline (signatures, buckets, clusters) on
  a local executor, 20 buckets of 5 hashes (an S-curve through about 0.55),
  its English word tokenizer; clusters from stage 3's cluster ids.
- datasketch: MinHash of 128 permutations per document, MinHashLSH at the
  threshold; every document queried, candidates united.
- rensa: RMinHash of 128 permutations built in Rust from the shingle sets,
  RMinHashLSH in 32 bands of 4 (an S-curve through about 0.42, so that
  pairs at 0.5 become candidates); candidates kept when their estimate reaches the
  threshold, then united.
- text-dedup: its MinHash script (python -m text_dedup.minhash) from a
  config.toml, 128 permutations, bands chosen by its own optimiser.

Tokens for datasketch and rensa are lowercased runs of word characters
(a user's re.findall(r"\\w+")); text-dedup and datatrove tokenize as they
do themselves. Documents are streamed in batches, never all held as
shingle sets.
"""

import argparse
import csv
import glob
import json
import os
import re
import struct
import subprocess
import sys

WORD = re.compile(r"\w+")


def shards(args):
    return sorted(glob.glob(os.path.join(args.shards, "*.jsonl")))


def documents(args):
    for path in shards(args):
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                yield d["id"], d["text"]


def shingles(text, n):
    words = WORD.findall(text.lower())
    if len(words) < n:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def batches(it, size):
    batch = []
    for x in it:
        batch.append(x)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        p = self.parent.setdefault(x, x)
        while p != x:
            gp = self.parent[p]
            self.parent[x] = gp
            x, p = p, gp
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def write_clusters(out, ids, uf):
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "cluster"])
        for key in sorted(uf.parent):
            w.writerow([ids[key], uf.find(key)])


def run_datasketch(args):
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=args.threshold, num_perm=128)
    ids, sketches = [], []
    for batch in batches(documents(args), 1000):
        for doc_id, text in batch:
            m = MinHash(num_perm=128)
            m.update_batch([s.encode("utf-8") for s in shingles(text, args.ngram)])
            key = len(ids)
            ids.append(doc_id)
            lsh.insert(key, m)
            sketches.append(m)
    uf = UnionFind()
    for key, m in enumerate(sketches):
        for other in lsh.query(m):
            if other != key:
                uf.union(key, other)
    write_clusters(args.out, ids, uf)


def run_rensa(args):
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=args.threshold, num_perm=128, num_bands=32)
    ids, sketches = [], []
    for batch in batches(documents(args), 1000):
        mhs = RMinHash.from_token_sets([list(shingles(t, args.ngram)) for _, t in batch], 128, 42)
        for (doc_id, _), m in zip(batch, mhs):
            key = len(ids)
            ids.append(doc_id)
            lsh.insert(key, m)
            sketches.append(m)
    uf = UnionFind()
    for key, cands in enumerate(lsh.query_all(sketches)):
        for other in cands:
            if other != key and sketches[key].jaccard(sketches[other]) >= args.threshold:
                uf.union(key, other)
    write_clusters(args.out, ids, uf)


def run_datatrove(args):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.typeshelper import Languages

    files = shards(args)
    config = MinhashConfig(n_grams=args.ngram, num_buckets=20, hashes_per_bucket=5, hash_config=HashConfig(precision=64))
    work = args.work
    # One task per shard, so that stage 1's rank r is shard r and its
    # document index is the line number of the shard.
    LocalPipelineExecutor(
        pipeline=[
            JsonlReader(args.shards, glob_pattern="*.jsonl"),
            MinhashDedupSignature(output_folder=f"{work}/signatures", config=config, language=Languages.english),
        ],
        tasks=len(files),
        workers=args.workers,
        logging_dir=f"{work}/logs/signatures",
    ).run()
    LocalPipelineExecutor(
        pipeline=[
            MinhashDedupBuckets(input_folder=f"{work}/signatures", output_folder=f"{work}/buckets", config=config),
        ],
        tasks=config.num_buckets,
        workers=args.workers,
        logging_dir=f"{work}/logs/buckets",
    ).run()
    LocalPipelineExecutor(
        pipeline=[
            MinhashDedupCluster(
                input_folder=f"{work}/buckets", output_folder=f"{work}/remove", config=config, save_cluster_id=True
            ),
        ],
        tasks=1,
        logging_dir=f"{work}/logs/clusters",
    ).run()
    with open(args.out, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["id", "cluster"])
        for rank, path in enumerate(files):
            with open(path, encoding="utf-8") as f:
                line_ids = [json.loads(line)["id"] for line in f]
            clusters = f"{work}/remove/{rank:06d}.clusters"
            if not os.path.exists(clusters):
                continue
            with open(clusters, "rb") as f:
                data = f.read()
            for doc, cluster in struct.iter_unpack("<II", data):
                w.writerow([line_ids[doc], cluster])


TEXT_DEDUP_CONFIG = """
[input]
input_type = "local_files"
file_type = "json"

[input.read_arguments]
path = "json"
data_files = {files}
split = "train"

[algorithm]
algorithm_name = "minhash"
text_column = "text"
seed = 42
batch_size = 10000
num_perm = 128
threshold = {threshold}
ngram_size = {ngram}
num_proc = {workers}
check_false_positive = false

[output]
output_dir = "{output}"
skip_filtering = true
save_clusters = true
keep_cluster_column = true
keep_index_column = true

[debug]
enable_profiling = false
"""


def run_text_dedup(args):
    work = args.work
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "config.toml"), "w") as f:
        f.write(
            TEXT_DEDUP_CONFIG.format(
                files=json.dumps(shards(args)),
                threshold=args.threshold,
                ngram=args.ngram,
                workers=args.workers,
                output=os.path.join(work, "output"),
            )
        )
    env = dict(os.environ, HF_HOME=os.path.join(work, "hf"), HF_DATASETS_CACHE=os.path.join(work, "hf", "datasets"))
    subprocess.run([sys.executable, "-m", "text_dedup.minhash"], cwd=work, env=env, check=True)
    from datasets import load_from_disk

    ds = load_from_disk(os.path.join(work, "output"))
    with open(args.out, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["id", "cluster"])
        for row in ds.select_columns(["id", "__CLUSTER__"]).iter(batch_size=10000):
            for doc_id, cluster in zip(row["id"], row["__CLUSTER__"]):
                w.writerow([doc_id, cluster])


TOOLS = {
    "datatrove": run_datatrove,
    "datasketch": run_datasketch,
    "rensa": run_rensa,
    "text-dedup": run_text_dedup,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tool", choices=sorted(TOOLS))
    p.add_argument("--shards", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--ngram", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    args.shards, args.work, args.out = (os.path.abspath(x) for x in (args.shards, args.work, args.out))
    os.makedirs(args.work, exist_ok=True)
    TOOLS[args.tool](args)


if __name__ == "__main__":
    main()
