# SPDX-License-Identifier: Apache-2.0
"""python -m peaklens record [--backend auto|torch|cupti] [--allocator exact|async|native]
                           [--out DIR] -- CMD ARGS...

Runs a training command with this package importable, recorded through PyTorch's own
allocator (torch: libpeaklens_torch.so, any machine) or the CUPTI collector (cupti:
libpeaklens_cupti.so, a GPU), and leaves one trace per process in DIR: what
``peaklens-cli record`` does, for a machine where only the Python package is installed. The two must stay alike (app/cli/recordcommand.cpp,
docs/recording.md). Exit codes: the command's own (128 + N when signal N ended it); 2
when record cannot start it, with one sentence on stderr.
"""

import _ctypes
import argparse
import ctypes
import glob
import json
import os
import shutil
import signal
import subprocess
import sys

from . import __version__

COLLECTOR = "libpeaklens_cupti.so"
TORCH_RECORDER = "libpeaklens_torch.so"
BACKENDS = ("auto", "torch", "cupti")
ALLOCATORS = ("exact", "async", "native")
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class RecordError(Exception):
    """Why record cannot run the command: one sentence for the user."""


def require_cuda_device(driver_name="libcuda.so.1"):
    """Raises RecordError unless the NVIDIA driver sees a GPU. Asked through the driver
    API, loaded here rather than through PyTorch, which the launcher may not have."""
    try:
        driver = ctypes.CDLL(driver_name, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError:
        raise RecordError("record needs a CUDA device, and this machine has none: "
                          f"the NVIDIA driver ({driver_name}) is not installed.") from None
    init = getattr(driver, "cuInit", None)
    count = getattr(driver, "cuDeviceGetCount", None)
    status = -1
    if init is not None:
        init.argtypes, init.restype = [ctypes.c_uint], ctypes.c_int
        status = init(0)
    devices = ctypes.c_int(0)
    if count is not None:
        count.argtypes, count.restype = [ctypes.POINTER(ctypes.c_int)], ctypes.c_int
    if status != 0 or count is None or count(ctypes.byref(devices)) != 0 or devices.value == 0:
        raise RecordError(f"record needs a CUDA device, and the NVIDIA driver sees none (cuInit returned {status}).")


def _installed_collector_dir():
    """The folder ``_installed.py`` names (written when CMake installs the package beside
    the collector), or None for a package installed by pip or used from the source tree."""
    try:
        from . import _installed
    except ImportError:
        return None
    directory = getattr(_installed, "COLLECTOR_DIR", None)
    return os.path.normpath(os.path.join(PACKAGE_DIR, directory)) if directory else None


def collector_places():
    """Where the plugin libraries (the collector, the torch recorder) are looked for, in
    order, as glob patterns of folders."""
    places = []
    plugin_dir = os.environ.get("PEAKLENS_PLUGIN_DIR")
    if plugin_dir:
        places.append(glob.escape(plugin_dir))
    places.append(glob.escape(os.path.join(PACKAGE_DIR, "_lib")))  # a wheel that carries it
    installed = _installed_collector_dir()
    if installed:
        places.append(glob.escape(installed))
    cli = shutil.which("peaklens-cli")
    if cli:
        # Both the folder on PATH and the one a link leads to, where the rest was installed.
        for bin_dir in dict.fromkeys((os.path.dirname(os.path.abspath(cli)), os.path.dirname(os.path.realpath(cli)))):
            places.append(glob.escape(bin_dir))  # the build tree keeps it beside peaklens-cli
            prefix = glob.escape(os.path.dirname(bin_dir))
            # lib/peaklens, lib64/peaklens, lib/<multiarch>/peaklens; no deeper, since a
            # recursive walk of /usr/lib would take seconds.
            places.append(os.path.join(prefix, "lib*", "peaklens"))
            places.append(os.path.join(prefix, "lib*", "*", "peaklens"))
    return places


def find_plugin(name):
    """The path of the plugin library ``name``, links resolved as peaklens-cli resolves
    them, or None."""
    for place in collector_places():
        for folder in sorted(glob.glob(place)):
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return os.path.realpath(candidate)
    return None


def require_plugin(name, what, built):
    """find_plugin(name), or RecordError naming where it looked."""
    found = find_plugin(name)
    if found:
        return found
    looked = collector_places()
    if not os.environ.get("PEAKLENS_PLUGIN_DIR"):
        looked.insert(0, "$PEAKLENS_PLUGIN_DIR (unset)")
    if not shutil.which("peaklens-cli"):
        looked.append("beside peaklens-cli (not on PATH)")
    raise RecordError(f"the {what} {name} was not found in {', '.join(looked)}: set PEAKLENS_PLUGIN_DIR "
                      f"to the folder that holds it; it is built {built}.")


def find_collector():
    """The path of libpeaklens_cupti.so; RecordError naming where it looked."""
    return require_plugin(COLLECTOR, "CUPTI collector", "where the CUDA toolkit with CUPTI is installed")


def find_torch_recorder():
    """The path of libpeaklens_torch.so; RecordError naming where it looked."""
    return require_plugin(TORCH_RECORDER, "torch recorder", "against the PyTorch the training runs")


def choose_backend(asked, allocator=None):
    """``auto`` is cupti when an allocator mode is asked for (only the collector has them),
    else torch wherever its recorder is installed, else cupti."""
    if asked != "auto":
        return asked
    return "torch" if allocator is None and find_plugin(TORCH_RECORDER) else "cupti"


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _dladdr():
    for library in (None, "libdl.so.2"):  # glibc before 2.34 keeps dladdr in libdl
        try:
            function = ctypes.CDLL(library).dladdr
        except (OSError, AttributeError):
            continue
        function.argtypes, function.restype = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)], ctypes.c_int
        return function
    return None


def route_nvtx_to_cupti(collector, environment):
    """Points NVTX_INJECTION64_PATH at the libcupti the collector links, so that ranges
    pushed before CUDA starts are seen too; left alone when already set. Where the
    collector cannot be loaded here, it sets the variable itself once loaded."""
    if environment.get("NVTX_INJECTION64_PATH"):
        return
    try:
        library = ctypes.CDLL(collector, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
        subscribe = library.cuptiSubscribe
    except (OSError, AttributeError):
        return
    dladdr = _dladdr()
    info = _DlInfo()
    if dladdr is not None and dladdr(ctypes.cast(subscribe, ctypes.c_void_p), ctypes.byref(info)) and info.dli_fname:
        environment["NVTX_INJECTION64_PATH"] = os.fsdecode(info.dli_fname)
    _ctypes.dlclose(library._handle)


def _valid_utf8(text):
    """``text`` with bytes that are not UTF-8 (kept by Python as surrogates) replaced."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def record_environment(backend, plugin, out, allocator, command):
    """The command's environment: this one with the backend's variables set. ``plugin``
    is the collector (cupti) or the torch recorder (torch)."""
    environment = dict(os.environ)
    python_path = [os.path.dirname(PACKAGE_DIR)]
    if backend == "torch":
        environment["PEAKLENS_TORCH_RECORDER"] = plugin
        # Its sitecustomize starts the recorder once the process imports torch.
        python_path.append(os.path.join(PACKAGE_DIR, "_autostart"))
        allocator = "native"
    else:
        environment["CUDA_INJECTION64_PATH"] = plugin
        route_nvtx_to_cupti(plugin, environment)
        if allocator == "exact":
            environment["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
        elif allocator == "async":
            environment["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
    environment["PEAKLENS_OUT"] = os.path.abspath(out)
    environment["PEAKLENS_COMMAND"] = json.dumps([_valid_utf8(a) for a in command], ensure_ascii=False,
                                                 separators=(",", ":"))
    environment["PEAKLENS_CWD"] = os.getcwd()
    environment["PEAKLENS_ALLOCATOR"] = allocator
    if environment.get("PYTHONPATH"):
        python_path.append(environment["PYTHONPATH"])
    environment["PYTHONPATH"] = ":".join(python_path)
    return environment


def run_forwarding_signals(command, environment):
    """Runs ``command`` to its end and returns its exit code, 128 + N when signal N ended
    it, 127 when it cannot be started. SIGINT and SIGTERM sent to record reach it too,
    so Ctrl+C or a stop from the app ends the training."""
    state = {"child": None, "pending": []}

    def forward(signum, frame):
        child = state["child"]
        if child is None:
            state["pending"].append(signum)  # came while starting it: sent once it runs
        elif child.returncode is None:
            child.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            child = subprocess.Popen(command, env=environment)
        except OSError:
            print(f"peaklens: cannot run {command[0]}.", file=sys.stderr)
            return 127
        state["child"] = child
        for signum in state["pending"]:
            child.send_signal(signum)
        code = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return code if code >= 0 else 128 - code


def count_traces(out):
    try:
        return sum(1 for entry in os.scandir(out) if os.path.splitext(entry.name)[1] == ".peaklens")
    except OSError:
        return 0


def record(out, allocator, command, backend="auto"):
    """Records ``command``; returns its exit code. Raises RecordError before starting it.
    ``allocator`` (None: exact) applies to the cupti backend only."""
    backend = choose_backend(backend, allocator)
    if backend == "torch":
        if allocator not in (None, "native"):
            raise RecordError(f"--allocator {allocator} applies to --backend cupti: the torch backend records "
                              "PyTorch's caching allocator as it is.")
        plugin = find_torch_recorder()
    else:
        require_cuda_device()
        plugin = find_collector()
    out = out or "peaklens-%d" % os.getpid()
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as error:
        raise RecordError(f"{out}: cannot be created: {error.strerror or error}.") from None
    code = run_forwarding_signals(command, record_environment(backend, plugin, out, allocator or "exact", command))
    traces = count_traces(out)
    # The torch recorder starts in a process once it imports torch and allocates.
    why = ": no process of it imported torch and allocated memory" if traces == 0 and backend == "torch" else ""
    print(f"recorded {traces} trace file(s) in {out}; the command exited with {code}{why}", flush=True)
    return code


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m peaklens",
        description="The PeakLens helper's command line. In a training script: model = peaklens.instrument(model) "
                    "and with peaklens.step(): ... (docs/recording.md).")
    parser.add_argument("--version", action="version", version=f"peaklens {__version__}")
    commands = parser.add_subparsers(dest="subcommand", metavar="COMMAND")
    record_parser = commands.add_parser(
        "record", help="record a training run",
        description="Record a training run, as peaklens-cli record does: python -m peaklens record -- python "
                    "train.py. One trace per process lands in the out folder.")
    record_parser.add_argument("--out", metavar="DIR", help="folder for the traces (default: peaklens-<pid>)")
    record_parser.add_argument("--backend", choices=BACKENDS, default="auto",
                               help="torch (PyTorch's own allocator reports, any machine), cupti (the CUDA driver's "
                                    "view, a GPU) or auto (the default: cupti when --allocator is given, else torch "
                                    "where its recorder is installed)")
    record_parser.add_argument("--allocator", choices=ALLOCATORS, default=None,
                               help="with --backend cupti: exact (no caching: every tensor is seen; the default), "
                                    "async (cudaMallocAsync) or native (the caching allocator's segments)")
    record_parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                               help="the training command and its arguments")
    return parser, record_parser


def main(argv=None):
    parser, record_parser = _parser()
    arguments = parser.parse_args(argv)
    if arguments.subcommand is None:
        parser.print_help(sys.stderr)
        return 2
    command = arguments.command
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        record_parser.error("the training command is missing: python -m peaklens record -- python train.py")
    try:
        return record(arguments.out, arguments.allocator, command, arguments.backend)
    except RecordError as error:
        print(f"peaklens: {error}", file=sys.stderr)
        return 2
