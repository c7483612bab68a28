"""Make every stored output again from the code as it is now (standard library only); then read the diff.

    python tools/regenerate.py

The stored outputs, each made in turn from what comes before it: client_demo.py's transcripts
(docs/transcripts/), README.md's generated blocks (python diagram.py --readme: the start of a transcript and
the worked trace's diagram), and every lesson's outputs (python lessons/build.py). Their tests compare each one with
a fresh run, so after a deliberate change to what the demo or a lesson prints, this mends them.
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
KINDS = ("stdio", "memory", "http")  # client_demo.py's transports, one transcript each


def main() -> int:
    """Regenerate the transcripts, then README.md's blocks, then the lessons; say what was made."""
    for kind in KINDS:
        done = subprocess.run([sys.executable, "client_demo.py", "--transport", kind], cwd=ROOT, capture_output=True,
                              timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        if done.returncode != 0:
            sys.stderr.write(done.stderr.decode("utf-8", "replace"))
            return done.returncode
        (ROOT / "docs" / "transcripts" / f"client_demo_{kind}.txt").write_bytes(done.stdout)
        print(f"made docs/transcripts/client_demo_{kind}.txt")
    for command in (["diagram.py", "--readme"], ["lessons/build.py"]):
        subprocess.run([sys.executable, *command], cwd=ROOT, check=True, timeout=600)
        print(f"ran python {' '.join(command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
