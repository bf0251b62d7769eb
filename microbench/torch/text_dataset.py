"""A pure-Python Dataset: each item tokenises one line of text in
__getitem__ (lower-case, split into words, each word cut into the longest
pieces a WordPiece-style vocabulary holds, ids padded or cut to LENGTH), as
an NLP user's map-style Dataset does without a compiled tokenizer: the
item's cost is the Python interpreter's, not a C library's.

    ds = TokenisedText("/var/tmp/text")   # reads /var/tmp/text/corpus.txt
    ds[i]                                 # (LongTensor[LENGTH], 0)

write_corpus(root, lines, seed) writes a reproducible corpus there (words
drawn with Zipf-like frequencies from a made-up vocabulary). As a --dataset
for microbench/torch/probe.py: "text_dataset:TokenisedText". Debian's
python3 with python3-torch."""

import os
import random
import re

LENGTH = 256
WORD = re.compile(r"[a-z]+|[0-9]+|[^\sa-z0-9]")


def write_corpus(root, lines=800, seed=1):
    """Unless root/corpus.txt exists, writes `lines` lines of 40-120 words."""
    path = os.path.join(root, "corpus.txt")
    if os.path.exists(path):
        return path
    os.makedirs(root, exist_ok=True)
    rng = random.Random(seed)
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    vocab = ["".join(rng.choice(letters[: 8 + i % 18]) for _ in range(rng.randint(2, 12)))
             for i in range(5000)]
    weights = [1 / (r + 1) for r in range(len(vocab))]
    with open(path + ".tmp", "w") as f:
        for _ in range(lines):
            words = rng.choices(vocab, weights, k=rng.randint(40, 120))
            f.write(" ".join(w.capitalize() if rng.random() < 0.1 else w for w in words) + ".\n")
    os.replace(path + ".tmp", path)
    return path


class TokenisedText:
    def __init__(self, root):
        with open(os.path.join(root, "corpus.txt")) as f:
            self.lines = [line.rstrip("\n") for line in f]
        counts = {}
        for line in self.lines[:500]:
            for w in WORD.findall(line.lower()):
                counts[w] = counts.get(w, 0) + 1
        # Frequent words whole; every one- to three-letter piece, so any
        # word can be cut.
        self.vocab = {"[PAD]": 0, "[UNK]": 1}
        for w, c in sorted(counts.items(), key=lambda kv: -kv[1]):
            if c >= 5:
                self.vocab.setdefault(w, len(self.vocab))
        for w in list(counts):
            for n in (1, 2, 3):
                for i in range(len(w) - n + 1):
                    self.vocab.setdefault("##" + w[i:i + n], len(self.vocab))
                    self.vocab.setdefault(w[i:i + n], len(self.vocab))

    def __len__(self):
        return len(self.lines)

    def pieces(self, word):
        out, start = [], 0
        while start < len(word):
            end = min(len(word), start + 6)  # no piece is longer
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    out.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [1]
            start = end
        return out

    def __getitem__(self, i):
        import torch

        ids = []
        for w in WORD.findall(self.lines[i].lower()):
            ids += self.pieces(w)
        ids = (ids + [0] * LENGTH)[:LENGTH]
        return torch.tensor(ids, dtype=torch.long), 0
