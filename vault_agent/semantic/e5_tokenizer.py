"""multilingual-e5-small's tokenizer: XLM-R's SentencePiece unigram model, as `e5.c` runs it.

Built from the vocabulary bundled in the weights file (250,002 pieces with their scores;
e5_weights.py) and run by `sentencepiece` (measured against `tokenizers` with the same
vocabulary: 54 MB and 0.4 s of CPU to load against 519 MB and 4 s, and 4x faster per
text). The rules are `e5.c`'s (`tok_content`), which the parity test checks id for id:
1. each code point through the bundled normalisation map (NFKC-like; control characters
   dropped, tabs and newlines to spaces); NUL is dropped too (e5.c stops at it);
2. runs of two or more spaces collapsed to one;
3. a metaspace prepended, spaces to U+2581; Viterbi over the pieces, every piece but
   `<unk>` eligible (so a literal `<s>` in a note is the piece `<s>`, as in e5.c), a
   code point no piece covers is one `<unk>` each, scored min - 10 (sentencepiece merges a
   run of them into one: it is split back here).

`build_model_proto(weights)` writes the SentencePiece model (done once per weights hash by
e5_build.py, cached); `E5Tokenizer(model_bytes, weights)` loads it.
"""

from __future__ import annotations

import re
import struct

import sentencepiece

from vault_agent.semantic.e5_weights import E5Weights

PASSAGE_PREFIX = "passage: "
QUERY_PREFIX = "query: "
SPECIAL_TOKENS = 2  # <s> and </s> around every window
_SPACES = re.compile(" {2,}")
_METASPACE = "\u2581"

__all__ = ["PASSAGE_PREFIX", "QUERY_PREFIX", "SPECIAL_TOKENS", "E5Tokenizer", "build_model_proto"]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def build_model_proto(weights: E5Weights) -> bytes:
    """The serialized SentencePiece ModelProto of the bundled vocabulary.

    Written by hand in protobuf's wire format (sentencepiece_model.proto: ModelProto
    1 pieces {1 piece, 2 score, 3 type}, 2 trainer_spec {3 model_type, 4 vocab_size,
    40-43 unk/bos/eos/pad ids}, 3 normalizer_spec {1 name, 3 add_dummy_prefix,
    4 remove_extra_whitespaces, 5 escape_whitespaces}), so no protobuf runtime is needed.
    """
    normal, unknown = 1, 2
    parts: list[bytes] = []
    for i, (piece, score) in enumerate(zip(weights.pieces(), weights.scores.tolist(), strict=True)):
        kind = unknown if i == weights.unk else normal
        body = _field(1, piece.encode("utf-8")) + b"\x15" + _float32(score) + b"\x18" + _varint(kind)
        parts.append(_field(1, body))
    no_id = _varint((1 << 64) - 1)  # -1 as an int32 varint (ten bytes)
    trainer = (
        b"\x18\x01"  # model_type UNIGRAM
        + b"\x20"
        + _varint(len(parts))
        + b"\xc0\x02"
        + _varint(weights.unk)  # 40: unk_id
        + b"\xc8\x02"
        + no_id  # 41: bos_id
        + b"\xd0\x02"
        + no_id  # 42: eos_id
        + b"\xd8\x02"
        + no_id  # 43: pad_id
    )
    normalizer = _field(1, b"identity") + b"\x18\x01" + b"\x20\x00" + b"\x28\x01"
    return b"".join(parts) + _field(2, trainer) + _field(3, normalizer)


def _float32(value: float) -> bytes:
    return struct.pack("<f", value)


class E5Tokenizer:
    """Token ids as e5.c computes them; counts and cuts by tokens."""

    def __init__(self, model_proto: bytes, weights: E5Weights) -> None:
        self._sp = sentencepiece.SentencePieceProcessor(model_proto=model_proto)
        table: dict[int, str] = dict(weights.normalisation)
        table[0] = ""
        self._table = table
        self.unk = weights.unk
        self.bos = weights.bos
        self.eos = weights.eos
        self.pad = weights.pad

    def normalise(self, text: str) -> str:
        """Steps 1-2 of the module doc (lone surrogates become U+FFFD first)."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
        return _SPACES.sub(" ", text.translate(self._table))

    def content_ids(self, text: str) -> list[int]:
        """The token ids of `text` (prefix included by the caller; no <s>/</s>)."""
        normalised = self.normalise(text)
        ids: list[int] = self._sp.encode(normalised)
        if self.unk not in ids:
            return ids
        out: list[int] = []
        for token, piece in zip(ids, self._sp.encode(normalised, out_type=str), strict=True):
            out.extend([token] * len(piece) if token == self.unk else [token])
        return out

    def unknown_chars(self, text: str) -> int:
        """Characters of `text` the vocabulary has no piece for (read as <unk>)."""
        normalised = self.normalise(text)
        ids: list[int] = self._sp.encode(normalised)
        if self.unk not in ids:
            return 0
        pieces = self._sp.encode(normalised, out_type=str)
        return sum(len(piece) for token, piece in zip(ids, pieces, strict=True) if token == self.unk)

    def count(self, text: str, prefix: str = PASSAGE_PREFIX) -> int:
        """Tokens the model reads for `text`: prefix, content, <s> and </s> (before
        windows: past 512 the encoder splits it)."""
        return len(self.content_ids(prefix + text)) + SPECIAL_TOKENS

    def truncate(self, text: str, max_tokens: int, prefix: str = PASSAGE_PREFIX) -> str:
        """The longest start of `text` (cut at a token boundary) that the model reads as at
        most `max_tokens` tokens, prefix and specials included.

        One tokenization of the whole text gives both its count and the pieces to cut at;
        the cut's character is found by walking the normalisation only up to it (a Python
        walk over the whole text was ~3 ms a window, 11% of embedding a note).
        """
        head = self.normalise(prefix)
        normalised = _SPACES.sub(" ", text.translate(self._table))
        joined = head + normalised
        # Spaces collapsed across the prefix, or a lone surrogate: the count is not these
        # pieces', so it is taken on its own.
        same = joined == self.normalise(prefix + text)
        if not same and self.count(text, prefix) <= max_tokens:
            return text
        ids: list[int] = self._sp.encode(joined)
        pieces: list[str] = self._sp.encode(joined, out_type=str)
        costs = [len(p) if t == self.unk else 1 for t, p in zip(ids, pieces, strict=True)]
        if same and sum(costs) + SPECIAL_TOKENS <= max_tokens:
            return text
        budget = max(0, max_tokens - SPECIAL_TOKENS - len(self.content_ids(prefix)))
        skip = len(head) + 1  # the prefix and the prepended metaspace
        used = 0
        chars = 0
        for piece, cost in zip(pieces, costs, strict=True):
            if used + cost > budget:
                break
            used += cost
            chars += len(piece)
        end = chars - skip
        origin = self._origins(text, end)
        while end > 0:
            cut = text[: origin[end - 1] + 1]
            if self.count(cut, prefix) <= max_tokens:
                return cut
            end -= 1
        return ""

    def _origins(self, text: str, needed: int) -> list[int]:
        """For the first `needed` characters of the normalised `text`, the index of the
        character of `text` each comes from (the same map and space collapsing as
        `normalise`)."""
        out: list[int] = []
        last_space = False
        table = self._table
        for i, ch in enumerate(text):
            if len(out) >= needed:
                break
            for mapped in table.get(ord(ch), ch):
                if mapped == " " and last_space:
                    continue
                last_space = mapped == " "
                out.append(i)
        return out
