"""`python -m ticdc_conformance.consumers.streaming`: StreamingConsumer on stdin/stdout (NDJSON)."""
import sys

from .consumer import serve

if __name__ == "__main__":
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer, sys.stderr))
