#!/usr/bin/python3
"""Verifies every DKIM-Signature of a message with dkimpy (Debian's python3-dkim).

An implementation independent of the one that signs (mailauth), so a test cannot pass because
signer and verifier share a mistake. DNS is never used: the keys come from the JSON object given
as the only argument, {"sel._domainkey.example.com": "v=DKIM1; k=rsa; p=..."}.

stdin: the raw message. stdout: a JSON array, one entry per signature, top to bottom:
{"domain", "selector", "algorithm", "valid", "error"}.
"""
import json
import logging
import sys

try:
    import dkim
    import nacl  # noqa: F401  dkimpy verifies ed25519-sha256 (RFC 8463) only with it
except ImportError as error:
    sys.exit(f"dkim-verify: {error}; install Debian's python3-dkim and python3-nacl")


class Collect(logging.Handler):
    """dkimpy logs why a signature failed (body hash mismatch, bad key) and returns False."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.errors = []

    def emit(self, record):
        if record.levelno >= logging.ERROR:
            self.errors.append(record.getMessage())


def main():
    records = {name.lower().rstrip("."): value for name, value in json.loads(sys.argv[1]).items()}
    message = sys.stdin.buffer.read()

    def dnsfunc(name, timeout=5):
        value = records.get(name.decode("ascii").lower().rstrip("."))
        return value.encode("utf-8") if value is not None else None

    headers = dkim.rfc822_parse(message)[0]
    signatures = [value for name, value in headers if name.lower() == b"dkim-signature"]
    results = []
    for idx, header in enumerate(signatures):
        try:
            tags = dkim.util.parse_tag_value(header)
        except Exception:  # an unparsable header is still a signature that failed
            tags = {}
        collect = Collect()
        logger = logging.getLogger(f"dkim-verify-{idx}")
        logger.addHandler(collect)
        logger.propagate = False
        error = None
        try:
            valid = bool(dkim.DKIM(message, logger=logger).verify(idx=idx, dnsfunc=dnsfunc))
        except Exception as exception:  # DKIMException, or a key nacl/dkimpy cannot load
            valid, error = False, f"{type(exception).__name__}: {exception}"
        if not valid and error is None:
            error = "; ".join(collect.errors) or "signature did not verify"
        results.append({
            "domain": tags.get(b"d", b"").decode("utf-8", "replace"),
            "selector": tags.get(b"s", b"").decode("utf-8", "replace"),
            "algorithm": tags.get(b"a", b"").decode("utf-8", "replace"),
            "valid": valid,
            "error": error,
        })
    json.dump(results, sys.stdout)


main()
