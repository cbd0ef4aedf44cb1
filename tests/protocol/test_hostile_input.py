"""Hostile input gets one line and bounded memory (issue 37, item 5): repeated keys refused in every format, one
bounded JSON reader (depth, integer size, memory at most MAX_TREE_FACTOR x the text), size caps on every read,
atomic writes, and reject messages in the document's words."""

from __future__ import annotations

import errno
import io
import json
import os
import threading
import tracemalloc

import pytest

import whirgpu
from whirgpu import files
from whirgpu.cli import commands as cli
from whirgpu.cli import options
from whirgpu.errors import ConfigError, FileError, ProofFormatError
from whirgpu.many.batch_verify import verify_many
from whirgpu.profiles.documents import read_document
from whirgpu.profiles.whir_p3_metal import serialize
from whirgpu.protocol.bounded_json import MAX_TREE_FACTOR, loads_bounded
from whirgpu.protocol.document_limits import MAX_INPUT_JSON_BYTES, MAX_PROOF_DOCUMENT_BYTES, \
    json_document_bound, largest_proof_words

from ..conftest import golden_bytes, golden_p3_bytes

SMALL_GOLDEN = "n10_f2_r1_s32_p0_cb.json"
DRAWN = "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"
MIB = 1 << 20


def _run(argv, capsys):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# ---- repeated keys --------------------------------------------------------------------------------------------

def _with_false_claim_first(text: str) -> str:
    """The golden whir-p3-json document with a false ``claimed_values_canonical`` before the true one."""
    doc = json.loads(text)
    false = [[(v + 1) % 5 for v in value] for value in doc["claimed_values_canonical"]]
    true = json.dumps(doc.pop("claimed_values_canonical"))
    return text[:1] + f'"claimed_values_canonical":{json.dumps(false)},' + text[1:-1] + \
        f',"claimed_values_canonical":{true}' + "}"


def test_a_repeated_key_in_a_whir_p3_json_document_is_refused_naming_it():
    text = _with_false_claim_first(golden_bytes(SMALL_GOLDEN).decode())
    for source in (text, text.encode()):
        with pytest.raises(ProofFormatError, match="key 'claimed_values_canonical' appears twice in one object"):
            whirgpu.verify(source)
        assert not whirgpu.is_valid(source)
    with pytest.raises(ProofFormatError, match="appears twice"):
        serialize.from_whir_p3_json(text)


def test_a_repeated_key_in_the_binary_header_is_refused():
    data = serialize.dump(serialize.load(golden_bytes(SMALL_GOLDEN)), "binary")
    start = len(serialize.BINARY_MAGIC) + 4
    header_len = int.from_bytes(data[len(serialize.BINARY_MAGIC):start], "little")
    header = data[start:start + header_len]
    doubled = b'{"num_claims":1,' + header[1:]
    blob = serialize.BINARY_MAGIC + len(doubled).to_bytes(4, "little") + doubled + data[start + header_len:]
    with pytest.raises(ProofFormatError, match="header: .*key 'num_claims' appears twice"):
        whirgpu.verify(blob)


def test_a_repeated_key_in_a_statement_file_is_refused(tmp_path, capsys):
    proof = tmp_path / "p.json"
    proof.write_bytes(golden_bytes(SMALL_GOLDEN))
    statement = tmp_path / "s.json"
    statement.write_text('{"points": [], "points": []}')
    code, out, err = _run(["verify", proof, "--statement", statement], capsys)
    assert code == 1 and "key 'points' appears twice" in _one_line(err)


# ---- memory and depth -----------------------------------------------------------------------------------------

def _peak(data: bytes):
    """(peak bytes traced while reading ``data``, the error or None)."""
    tracemalloc.start()
    try:
        loads_bounded(data)
        error = None
    except ProofFormatError as exc:
        error = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, error


def _array(item: bytes, size: int) -> bytes:
    return b"[" + b",".join([item] * (size // (len(item) + 1))) + b"]"


HOSTILE = {
    "one long string": lambda size: b'{"notes":"' + b"a" * size + b'"}',
    "a long string of astral characters": lambda size: b'["' + "\U0001F600".encode() * (size // 4) + b'"]',
    "a long string of escapes": lambda size: b'["' + b"\\ud83d\\ude00" * (size // 12) + b'"]',
    "many keys": lambda size: b"{" + b",".join(b'"%x":0' % i for i in range(size // 9)) + b"}",
    "a long list of numbers": lambda size: _array(b"1234567", size),
    "a long list of small numbers": lambda size: _array(b"1", size),
    "a long list of floats": lambda size: _array(b"1.5", size),
    "a long list of short strings": lambda size: _array(b'"ab"', size),
    "a long list of empty lists": lambda size: _array(b"[]", size),
    "a long list of empty objects": lambda size: _array(b"{}", size),
    "a long list of one-key objects": lambda size: _array(b'{"a":0}', size),
    "a long list of one-number lists": lambda size: _array(b"[0]", size),
    "a long list of brackets in strings": lambda size: _array(b'"[[{{"', size),
}


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_reading_any_document_takes_at_most_max_tree_factor_times_its_size(shape):
    data = HOSTILE[shape](4 * MIB)
    peak, error = _peak(data)
    assert peak <= MAX_TREE_FACTOR * len(data), (shape, peak / len(data), error)
    if error is not None:
        assert "MAX_TREE_FACTOR" in str(error) and "\n" not in str(error), error


def test_the_memory_bound_does_not_refuse_real_documents():
    for data in (golden_bytes(SMALL_GOLDEN), golden_p3_bytes(DRAWN)):
        peak, error = _peak(data)
        assert error is None and peak <= MAX_TREE_FACTOR * max(len(data), 1 << 16)


def test_a_p3_whir_document_holding_one_long_string_is_refused_in_bounded_memory():
    data = b'{"format":"p3-whir-oracle/v1","notes":"' + b"x" * (8 * MIB) + b'"}'
    tracemalloc.start()
    with pytest.raises(ProofFormatError):
        read_document(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= MAX_TREE_FACTOR * len(data)


def test_a_statement_nested_deep_is_one_line_not_a_recursion_error(tmp_path, capsys):
    proof = tmp_path / "p.json"
    proof.write_bytes(golden_bytes(SMALL_GOLDEN))
    statement = tmp_path / "s.json"
    statement.write_text('{"points": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, out, err = _run(["verify", proof, "--statement", statement], capsys)
    line = _one_line(err)
    assert code == 1 and "nested 100001 deep, above MAX_JSON_DEPTH" in line
    assert "Recursion" not in line and "internal error" not in line


@pytest.mark.parametrize("data, words, internals", [
    (b"null", "a JSON null", "NoneType"),
    (b"[1]", "a JSON array", "list"),
    (b'{"format": 1' + b"9" * 5000 + b"}", "an integer of 5001 digits", "set_int_max_str_digits"),
    (b"[" * 5000 + b"]" * 5000, "nested 5000 deep", "recursion"),
    (b'{"a": NaN}', "NaN is not JSON", "Error"),
    (b'{"a": 1,}', "not JSON: ", "Error"),
])
def test_reject_messages_are_in_the_documents_words(data, words, internals):
    with pytest.raises(ProofFormatError) as info:
        whirgpu.verify(data)
    message = str(info.value)
    assert words in message and internals not in message and "\n" not in message, message


# ---- size caps --------------------------------------------------------------------------------------------------

def test_the_caps_hold_the_largest_documents_the_limits_allow():
    assert MAX_PROOF_DOCUMENT_BYTES >= 1.5 * json_document_bound()
    assert MAX_PROOF_DOCUMENT_BYTES >= 4 * 4 * largest_proof_words()  # the binary format: 4 bytes a word
    assert MAX_INPUT_JSON_BYTES >= (1 << 16) * 34 * 4 * 12
    assert len(golden_p3_bytes(DRAWN)) * 100 < MAX_PROOF_DOCUMENT_BYTES


@pytest.fixture
def small_cap(monkeypatch):
    """A 1 MiB cap on proof documents, so that the tests read little."""
    for module in (serialize, options):
        monkeypatch.setattr(module, "MAX_PROOF_DOCUMENT_BYTES", MIB)
    return MIB


@pytest.fixture
def endless_spaces(tmp_path):
    """A FIFO that yields JSON whitespace until its reader stops: a document that might still become JSON, so only
    the cap ends it (a writer thread, stopped by the reader closing its end)."""
    path = tmp_path / "endless"
    os.mkfifo(path)

    def feed():
        try:
            with open(path, "wb") as f:
                while True:
                    f.write(b" " * 65536)
        except (BrokenPipeError, OSError):
            pass

    threading.Thread(target=feed, daemon=True).start()
    return path


def test_an_endless_file_is_read_no_further_than_the_cap(small_cap, endless_spaces):
    with pytest.raises(ProofFormatError, match=f"proof document larger than {small_cap} bytes \\(the largest proof "
                                               f"the limits allow is .*MAX_PROOF_DOCUMENT_BYTES\\)"):
        whirgpu.verify(endless_spaces)


def test_an_endless_file_is_not_valid(small_cap, endless_spaces):
    assert whirgpu.is_valid(endless_spaces) is False


def test_an_endless_file_is_its_own_verdict_in_a_batch(small_cap, endless_spaces):
    good = golden_bytes(SMALL_GOLDEN)
    assert [v.ok for v in verify_many([endless_spaces, good])] == [False, True]


def test_a_stream_no_document_can_start_with_is_refused_at_its_first_bytes(monkeypatch):
    reads = []
    real = files._read_stream

    def counting(stream, *args):
        class Counted:
            def read(self, n):
                data = stream.read(n)
                reads.append(len(data))
                return data
        return real(Counted(), *args)

    monkeypatch.setattr(files, "_read_stream", counting)
    with pytest.raises(ProofFormatError, match="^not a proof document of any profile: not JSON: it starts with "
                                               "byte 0x00 \\(and not the binary format\\)$"):
        whirgpu.verify("/dev/zero")  # the real cap: refused after one chunk, not after 1 GiB
    assert len(reads) == 1
    assert whirgpu.is_valid("/dev/zero") is False
    assert [v.ok for v in verify_many(["/dev/zero", golden_bytes(SMALL_GOLDEN)])] == [False, True]


def test_a_large_regular_file_is_refused_from_its_size(small_cap, tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(small_cap + 1)
    monkeypatch.setattr(files, "_read_stream", lambda *a: pytest.fail("read past the size check"))
    with pytest.raises(ProofFormatError, match="larger than"):
        whirgpu.verify(big)
    with pytest.raises(ProofFormatError, match="larger than"):
        whirgpu.verify(b" " * (small_cap + 1))


class _Spaces(io.RawIOBase):
    def readable(self):
        return True

    def readinto(self, buffer):
        buffer[:] = b" " * len(buffer)
        return len(buffer)


def test_verify_of_endless_input_is_one_reject_line(small_cap, endless_spaces, monkeypatch, capsys):
    code, out, err = _run(["verify", str(endless_spaces)], capsys)
    assert code == 1 and _one_line(out).startswith(f"reject: proof document larger than {small_cap} bytes")
    code, out, err = _run(["verify", "/dev/zero"], capsys)
    assert code == 1 and _one_line(out).startswith("reject: not a proof document of any profile: not JSON: it "
                                                   "starts with byte 0x00")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(_Spaces())))
    code, out, err = _run(["verify", "-"], capsys)
    assert code == 1 and _one_line(out).startswith("reject: proof document larger than")


def test_a_statement_file_past_its_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(options, "MAX_INPUT_JSON_BYTES", 1000)
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"points": [[[0] * 4] * 8] * 40}))
    with pytest.raises(ConfigError, match=f"{path} larger than 1000 bytes"):
        options.read_json_file(path, cap=options.MAX_INPUT_JSON_BYTES)


# ---- atomic writes ----------------------------------------------------------------------------------------------

def _failing_midway(f, data):
    f.write(data[:len(data) // 2])
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "proof.whir"
    path.write_bytes(b"the old proof")
    monkeypatch.setattr(files, "_write_all", _failing_midway)
    with pytest.raises(FileError, match=f"cannot write {path}: No space left on device"):
        files.write_atomic(path, b"x" * 4096)
    assert path.read_bytes() == b"the old proof" and os.listdir(tmp_path) == ["proof.whir"]
    monkeypatch.undo()
    files.write_atomic(path, "new")
    assert path.read_text() == "new" and os.listdir(tmp_path) == ["proof.whir"]


@pytest.mark.parametrize("profile", ["whir-p3-metal", "p3-whir"])
def test_prove_out_on_a_full_disk_keeps_the_existing_proof(profile, tmp_path, monkeypatch, capsys):
    out = tmp_path / "proof"
    out.write_bytes(b"an existing proof")
    monkeypatch.setattr(files, "_write_all", _failing_midway)
    code, stdout, err = _run(["prove", "--profile", profile, "-n", "8", "-k", "2", "-r", "1", "--seed", "1",
                              "--backend", "cpu", "--out", out], capsys)
    assert code == 2 and "No space left on device" in _one_line(err)
    assert out.read_bytes() == b"an existing proof" and os.listdir(tmp_path) == ["proof"]
