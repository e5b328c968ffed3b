"""What a Python study script records of the machine it ran on, beside run_experiment's own
provenance (experiments/results.cpp): the CPU's model name and the first GPU's name."""
import platform
import subprocess


def cpu_model():
    """The CPU's model name (/proc/cpuinfo), else what platform knows of it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name():
    """The first GPU's name (nvidia-smi), "" without one."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        return ""
