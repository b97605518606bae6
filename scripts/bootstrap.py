"""Set the course up and open it, or test it: the one script behind the README's two commands.

    python3 scripts/bootstrap.py lab     # Windows: py scripts\\bootstrap.py lab
    python3 scripts/bootstrap.py lab --lang fr   # the course in French (notebooks/fr/)
    python3 scripts/bootstrap.py lab --no-browser --port=8890   # anything else after `lab` goes to JupyterLab
    python3 scripts/bootstrap.py test    # adds the test tools, runs the whole suite

Why a Python script and not only the Makefile: a learner's laptop may have no `make` and no POSIX shell
(Windows), and a venv keeps its programs in `bin/` on Linux and macOS but in `Scripts\\` on Windows.
Python is the one thing every learner needs anyway, so the set-up is written in it (standard library
only; `make lab` and `make test` call this script too).

What it does, in order, saying each step on one line:
1. checks the Python running it first, before anything is installed: an older one gets one line saying
   which version is needed and how to get it (pip's own message would be a wall of "No matching
   distribution found for anthropic==...");
2. makes `.venv/`, or makes it again if it was built by another Python (a venv keeps the interpreter it
   was made with, so a retry with the right Python would otherwise still fail);
3. installs the pinned packages: `requirements.txt` (what the notebooks need) for `lab`, plus
   `requirements-dev.txt` (the test tools) for `test`; pip shows each download, so a slow network
   looks slow, not stuck. It runs again only when those files change. In a handout
   (authoring/handout.py) the same script installs from the handout's `wheelhouse/` without the network,
   after checking in `wheelhouse/platforms.json` that it serves this laptop and Python. When it does
   not (or pip finds a wheel missing), one line says so, names this laptop and what the handout serves,
   and the install goes on with the network, its retries bounded; with no network either, one more
   line says the two ways out, and `python -m looplab doctor` in the venv then says the same (see
   `leave_a_reason`). No step ends in a traceback: a failed command is one line (`main`);

Every line it prints is in the language `lab --lang` names (English otherwise): its words sit in `WORDS`,
one column a language, since no catalogue reader (nor, before 3.11, tomllib) exists yet when it runs.

4. `lab`: turns JupyterLab's news and update pop-ups off (in the venv's settings) and opens the first
   notebook, handing the terminal over to JupyterLab (see `hand_over`: one Ctrl+C, or a signal, stops
   it cleanly and leaves nothing running); `test`: installs the system packages the browser tests need
   where it can (Linux) and runs the suite in parallel.

Its syntax stays old on purpose (no `list[str]`, no walrus), so that Python 3.6 can read it far
enough to say it is too old.
"""

import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv")
NEEDED = (3, 11)
LEARNER_REQUIREMENTS = "requirements.txt"
DEV_REQUIREMENTS = "requirements-dev.txt"
HUB_VENV = os.path.join(ROOT, ".venv-hub")  # tests/hub/'s JupyterHub, apart from the course's venv (hub_environment)
HUB_REQUIREMENTS = "requirements-hub.txt"
WHEELHOUSE = "wheelhouse"  # in a handout: every wheel the course needs, for a room without internet
SERVED = "platforms.json"  # in the wheelhouse: the laptops and Pythons it serves (authoring/wheelhouse.py)
INDEX = "pypi.org"  # where pip downloads from, unless PIP_INDEX_URL says otherwise
# With the network: a dead network costs seconds, not pip's 5 retries of 15 s for every package.
BOUNDED = ["--retries", "1", "--timeout", "15"]
STAMP = ".looplab-installed"  # inside .venv: a hash of what was installed
FIRST_NOTEBOOK = "01_one_tool_call.ipynb"
# The course's languages: English notebooks in notebooks/, every other language's in notebooks/<language>/
# (generated from the English ones, docs/TRANSLATING.md). The notebook's own metadata makes its kernel speak it.
LANGUAGES = ("en", "fr")
# Every line this script prints, one column a language: it runs before the venv (and its catalogues' reader)
# exists, on a Python that may be too old for tomllib, so its words sit here, not in a TOML catalogue.
# `--lang fr` (of `lab`) picks the column; `test` and `setup` speak English, as the suite does.
WORDS = {
    "too_old": {
        "en": "looplab needs Python {needed} or newer; this is Python {found} ({executable}). {how}.",
        "fr": "looplab demande Python {needed} ou plus récent ; celui-ci est Python {found} ({executable}). {how}.",
    },
    "get_python_windows": {
        "en": "Install it from https://www.python.org/downloads/ (or `winget install Python.Python.3.12`), "
              "then run `py -3.12 scripts\\bootstrap.py lab{option}`",
        "fr": "Installez-le depuis https://www.python.org/downloads/ (ou `winget install Python.Python.3.12`), "
              "puis lancez `py -3.12 scripts\\bootstrap.py lab{option}`",
    },
    "get_python_macos": {
        "en": "Install it from https://www.python.org/downloads/ (or `brew install python@3.12`), "
              "then run `python3.12 scripts/bootstrap.py lab{option}`",
        "fr": "Installez-le depuis https://www.python.org/downloads/ (ou `brew install python@3.12`), "
              "puis lancez `python3.12 scripts/bootstrap.py lab{option}`",
    },
    "get_python_other": {
        "en": "Install it with your package manager (for example `sudo apt install python3.12 python3.12-venv`) "
              "or from https://www.python.org/downloads/, then run `python3.12 scripts/bootstrap.py lab{option}`",
        "fr": "Installez-le avec votre gestionnaire de paquets (par exemple `sudo apt install python3.12 "
              "python3.12-venv`) ou depuis https://www.python.org/downloads/, puis lancez "
              "`python3.12 scripts/bootstrap.py lab{option}`",
    },
    "incomplete": {"en": "it is incomplete", "fr": "il est incomplet"},
    "built_with": {
        "en": "it was built with Python {built}, this is Python {running}",
        "fr": "il a été construit avec Python {built}, celui-ci est Python {running}",
    },
    "removing": {
        "en": "removing {venv} ({reason}) and building it again",
        "fr": "suppression de {venv} ({reason}) pour le reconstruire",
    },
    "creating": {
        "en": "creating the virtual environment {venv}",
        "fr": "création de l'environnement virtuel {venv}",
    },
    "unnamed_laptops": {
        "en": "laptops it does not name (a handout older than its platforms.json)",
        "fr": "des ordinateurs qu'il ne nomme pas (un kit antérieur à son platforms.json)",
    },
    "no_laptop": {
        "en": "no laptop: it holds the course's wheel alone (the small handout)",
        "fr": "aucun ordinateur : il ne contient que le wheel du cours (le petit kit)",
    },
    "on_python": {"en": "{laptops} on Python {pythons}", "fr": "{laptops} avec Python {pythons}"},
    "then_online": {
        "en": "trying with the network now (or ask your teacher for a handout built {build})",
        "fr": "essai avec le réseau maintenant (ou demandez à votre enseignant un kit construit avec {build})",
    },
    "then_offline": {
        "en": "no network either, and nothing was installed: connect to a network and run this again, or ask "
              "your teacher for a handout built {build}",
        "fr": "pas de réseau non plus, et rien n'a été installé : connectez-vous à un réseau et relancez cette "
              "commande, ou demandez à votre enseignant un kit construit avec {build}",
    },
    "not_served": {
        "en": "{wheelhouse}/ {why} this laptop ({label}, Python {python}); it serves {serves}. So: {then}.",
        "fr": "{wheelhouse}/ {why} cet ordinateur ({label}, Python {python}) ; il sert {serves}. Donc : {then}.",
    },
    "lacks_a_wheel": {
        "en": "lacks a wheel (pip said which, above) for",
        "fr": "n'a pas tous les wheels (pip a dit lequel manque, plus haut) pour",
    },
    "no_wheels": {"en": "has no wheels for", "fr": "n'a aucun wheel pour"},
    "already_installed": {
        "en": "packages already installed ({files})",
        "fr": "paquets déjà installés ({files})",
    },
    "what_dev": {"en": "the course and its test tools", "fr": "le cours et ses outils de test"},
    "what_lab": {
        "en": "the course (about 55 MB the first time)",
        "fr": "le cours (environ 55 Mo la première fois)",
    },
    "installing": {
        "en": "installing {what}; pip shows each download",
        "fr": "installation de {what} ; pip affiche chaque téléchargement",
    },
    "pip_failed": {
        "en": "pip could not install it (its output says why); with no network, use a handout's wheelhouse",
        "fr": "pip n'a pas pu l'installer (sa sortie dit pourquoi) ; sans réseau, utilisez le wheelhouse d'un kit",
    },
    "set_up_stopped": {"en": "the set-up stopped: {why}", "fr": "l'installation s'est arrêtée : {why}"},
    "from_wheelhouse": {
        "en": "installing the course from {wheelhouse}/ (no download)",
        "fr": "installation du cours depuis {wheelhouse}/ (sans téléchargement)",
    },
    "small_offline": {
        "en": "this small handout needs the network for the packages the course uses, and there is none: "
              "connect to a network and run this again, or ask your teacher for the full handout",
        "fr": "ce petit kit a besoin du réseau pour les paquets qu'utilise le cours, et il n'y en a pas : "
              "connectez-vous à un réseau et relancez cette commande, ou demandez à votre enseignant le kit complet",
    },
    "small_online": {
        "en": "the small handout: the course is in {wheelhouse}/, the packages it needs come from the network "
              "(about 55 MB); pip shows each download",
        "fr": "le petit kit : le cours est dans {wheelhouse}/, les paquets dont il a besoin viennent du réseau "
              "(environ 55 Mo) ; pip affiche chaque téléchargement",
    },
    "network_failed": {
        "en": "could not install with the network either (pip said why, above): try again where the network is "
              "better, or ask your teacher for a handout built `--for {name}`",
        "fr": "l'installation a échoué avec le réseau aussi (pip a dit pourquoi, plus haut) : réessayez là où le "
              "réseau est meilleur, ou demandez à votre enseignant un kit construit avec `--for {name}`",
    },
    "opening": {
        "en": "opening JupyterLab (offline unless ANTHROPIC_API_KEY is set); stop it with Ctrl+C",
        "fr": "ouverture de JupyterLab (hors ligne sauf si ANTHROPIC_API_KEY est définie) ; arrêtez-le avec Ctrl+C",
    },
    "step_failed": {
        "en": "this step failed, see its output above: {command}",
        "fr": "cette étape a échoué, voyez sa sortie plus haut : {command}",
    },
    "not_installed": {
        "en": "looplab is not installed in this .venv: ",
        "fr": "looplab n'est pas installé dans ce .venv : ",
    },
}
SPEAKING = [LANGUAGES[0]]  # the language of the lines, set once by `main` from `lab --lang`


def word(key, **values):
    """The line `key` in the language this run speaks, filled with `values`."""
    row = WORDS[key]
    return row.get(SPEAKING[0], row[LANGUAGES[0]]).format(**values)


def lang_option():
    """What a command this script suggests adds to say the language again: " --lang fr", or nothing."""
    return "" if SPEAKING[0] == LANGUAGES[0] else " --lang " + SPEAKING[0]

# JupyterLab asks on first start whether to fetch news from the internet: not in a workshop.
QUIET_LAB = {"@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"}}


def say(message):
    print("bootstrap: " + message, flush=True)


def how_to_get_python(system):
    """Where a learner on this system gets a recent Python, in one sentence."""
    key = {"Windows": "get_python_windows", "Darwin": "get_python_macos"}.get(system, "get_python_other")
    return word(key, option=lang_option())


def version_problem(version_info, executable, system):
    """None if this Python can run the course, else the one line that says what to do."""
    if tuple(version_info[:2]) >= NEEDED:
        return None
    found = ".".join(str(part) for part in version_info[:3])
    return word("too_old", needed="{}.{}".format(*NEEDED), found=found, executable=executable,
                how=how_to_get_python(system))


def venv_python(venv):
    """The venv's interpreter: bin/python on Linux and macOS, Scripts\\python.exe on Windows."""
    if os.name == "nt":
        return os.path.join(venv, "Scripts", "python.exe")
    return os.path.join(venv, "bin", "python")


def venv_version(venv):
    """The Python version a venv was built with, from its pyvenv.cfg ("3.11.7"), or None."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8") as config:
            for line in config:
                key, _, value = line.partition("=")
                if key.strip() in ("version", "version_info"):
                    return value.strip()
    except OSError:
        return None
    return None


def stale_reason(venv, version_info):
    """Why an existing venv cannot be used with this Python, or None if it can (or there is none)."""
    if not os.path.isdir(venv):
        return None
    built_with = venv_version(venv)
    running = "{}.{}".format(*version_info[:2])
    if built_with is None or not os.path.exists(venv_python(venv)):
        return word("incomplete")
    if ".".join(built_with.split(".")[:2]) != running:
        return word("built_with", built=built_with, running=running)
    return None


def ensure_venv(venv=VENV, version_info=sys.version_info):
    """Make the venv, or make it again when another Python built it. Returns its interpreter."""
    reason = stale_reason(venv, version_info)
    if reason:
        say(word("removing", venv=venv, reason=reason))
        shutil.rmtree(venv)
    if not os.path.isdir(venv):
        say(word("creating", venv=venv))
        subprocess.check_call([sys.executable, "-m", "venv", venv])
    return venv_python(venv)


def requirement_files(dev):
    return [LEARNER_REQUIREMENTS] + ([DEV_REQUIREMENTS] if dev else [])


def install_fingerprint(dev, root=ROOT):
    """What an install depends on: the requirement files and pyproject.toml, hashed."""
    digest = hashlib.sha256()
    for name in requirement_files(dev) + ["pyproject.toml"]:
        path = os.path.join(root, name)
        if os.path.exists(path):  # a handout has no pyproject.toml: it installs a wheel
            with open(path, "rb") as handle:
                digest.update(name.encode() + b"\0" + handle.read())
    return digest.hexdigest()


def recorded_installs(venv):
    """What was installed into this venv: {"lab": fingerprint, "dev": fingerprint}, either may be absent."""
    try:
        with open(os.path.join(venv, STAMP), encoding="utf-8") as stamp:
            return json.load(stamp)
    except (OSError, ValueError):
        return {}


def this_laptop(system=None, machine=None, version_info=sys.version_info):
    """(name as `--for` takes it, label, Python): ("linux-aarch64", "Linux aarch64", "3.12")."""
    system = system or platform.system()
    machine = (machine or platform.machine()).lower()
    kind = {"Windows": "windows", "Darwin": "macos", "Linux": "linux"}.get(system, system.lower())
    machine = {"amd64": "x86_64", "x64": "x86_64"}.get(machine, machine)
    if machine in ("arm64", "aarch64"):
        machine = "aarch64" if kind == "linux" else "arm64"
    label = "{} {}".format({"macos": "macOS"}.get(kind, system), machine)
    return kind + "-" + machine, label, "{}.{}".format(*version_info[:2])


def read_served(wheelhouse):
    """The platforms a handout's wheelhouse serves (a list, maybe empty), or None if it does not say."""
    try:
        with open(os.path.join(wheelhouse, SERVED), encoding="utf-8") as served:
            return json.load(served)["platforms"]
    except (OSError, ValueError, KeyError):
        return None


def serves(entries, system=None, machine=None, version_info=sys.version_info):
    """Whether one of these platforms is this laptop with this Python."""
    system = system or platform.system()
    machine = (machine or platform.machine()).lower()
    python = "{}.{}".format(*version_info[:2])
    return any(entry["system"] == system and machine in entry["machines"] and python in entry["pythons"]
               for entry in entries)


def describe(entries):
    """What a wheelhouse serves, in a few words: "Linux x86_64, macOS arm64 on Python 3.11, 3.12"."""
    if entries is None:
        return word("unnamed_laptops")
    if not entries:
        return word("no_laptop")
    groups = []
    for entry in entries:
        pythons = ", ".join(entry["pythons"])
        for group in groups:
            if group[0] == pythons:
                group[1].append(entry["label"])
                break
        else:
            groups.append((pythons, [entry["label"]]))
    return "; ".join(word("on_python", laptops=", ".join(labels), pythons=pythons) for pythons, labels in groups)


def not_served_line(entries, laptop, why, online):
    """The one line for a laptop the wheelhouse cannot serve: this laptop, what it serves, the ways out."""
    name, label, python = laptop
    build = "`--for {}`".format(name)
    if entries and not any(python in entry["pythons"] for entry in entries):
        build = "`--for {} --python {}`".format(name, python)
    then = word("then_online" if online else "then_offline", build=build)
    return word("not_served", wheelhouse=WHEELHOUSE, why=why, label=label, python=python, serves=describe(entries),
                then=then)


def network_reachable(timeout=5):
    """Whether pip's index answers at all, so that a laptop offline gets one line, not pip's retries."""
    if any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True  # through a proxy: let pip try
    host = INDEX
    index = os.environ.get("PIP_INDEX_URL", "")
    if "://" in index:
        host = index.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        if index.startswith("file:"):
            return True
    name, _, port = host.partition(":")
    try:
        socket.create_connection((name, int(port or 443)), timeout=timeout).close()
        return True
    except (OSError, ValueError):
        return False


def placeholder_folder(python):
    """Where a package named looplab goes in the venv (its site-packages), asked of the venv's Python."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.check_output([python, "-c", code], universal_newlines=True).strip()
    return os.path.join(site, "looplab")


def has_looplab(python):
    """Whether the venv's Python finds a looplab at all (installed, editable, or this placeholder)."""
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('looplab') is None)"
    return subprocess.call([python, "-c", code], cwd=os.path.dirname(python)) == 0


PLACEHOLDER = '''"""Not the course: scripts/bootstrap.py put this here when the set-up stopped, to say why."""
import sys
WHY = {why!r}
if sys.argv[:1] == ["-m"]:  # python -m looplab doctor
    sys.exit({prefix!r} + WHY)
raise ImportError({prefix!r} + WHY)
'''


def leave_a_reason(python, why):
    """After a failed install, `python -m looplab doctor` says why, not "No module named looplab"."""
    if has_looplab(python):
        return  # an earlier install is there (the failure was an update): leave it alone
    folder = placeholder_folder(python)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "__init__.py"), "w", encoding="utf-8") as placeholder:
        placeholder.write(PLACEHOLDER.format(why=why, prefix=word("not_installed")))


def remove_placeholder(python):
    folder = placeholder_folder(python)
    if os.path.isdir(folder) and not os.path.exists(os.path.join(folder, "doctor.py")):
        shutil.rmtree(folder)


def install(python, dev, venv=VENV):
    """pip install the pinned requirements (showing downloads), then remember what was installed.

    Returns True, or False after saying in one line why the course could not be installed."""
    kind = "dev" if dev else "lab"
    recorded = recorded_installs(venv)
    if recorded.get(kind) == install_fingerprint(dev):
        say(word("already_installed", files=" + ".join(requirement_files(dev))))
        return True
    remove_placeholder(python)
    pip_install = [python, "-m", "pip", "install", "--progress-bar", "on", "-r", requirement_files(dev)[-1]]
    wheelhouse = os.path.join(ROOT, WHEELHOUSE)
    if os.path.isdir(wheelhouse):
        failure = install_from_wheelhouse(pip_install, wheelhouse)
    else:
        say(word("installing", what=word("what_dev" if dev else "what_lab")))
        failure = None if subprocess.call(pip_install, cwd=ROOT) == 0 else word("pip_failed")
    if failure:
        say(failure)
        leave_a_reason(python, word("set_up_stopped", why=failure))
        return False
    recorded[kind] = install_fingerprint(dev)
    if dev:
        recorded["lab"] = install_fingerprint(False)  # the dev requirements include the learner's
    with open(os.path.join(venv, STAMP), "w", encoding="utf-8") as stamp:
        json.dump(recorded, stamp)
    return True


def install_from_wheelhouse(pip_install, wheelhouse):
    """Offline when the wheelhouse serves this laptop, else (or if pip finds a wheel missing) with the
    network. Returns None once installed, else the line that says why not and what to do."""
    entries = read_served(wheelhouse)
    if entries is None or serves(entries):  # no platforms.json: a handout from before it existed, try it
        say(word("from_wheelhouse", wheelhouse=WHEELHOUSE))
        if subprocess.call(pip_install + ["--no-index", "--find-links", wheelhouse], cwd=ROOT) == 0:
            return None
        why = word("lacks_a_wheel")
    else:
        why = word("no_wheels")
    online = network_reachable()
    if entries == []:  # the small handout: the course's wheel alone, by design
        if not online:
            return word("small_offline")
        say(word("small_online", wheelhouse=WHEELHOUSE))
    else:
        line = not_served_line(entries, this_laptop(), why, online)
        if not online:
            return line
        say(line)
    if subprocess.call(pip_install + BOUNDED + ["--find-links", wheelhouse], cwd=ROOT) == 0:
        return None
    return word("network_failed", name=this_laptop()[0])


def quiet_jupyterlab(venv=VENV):
    """No news or update pop-ups: JupyterLab reads overrides.json from the venv's settings folder."""
    folder = os.path.join(venv, "share", "jupyter", "lab", "settings")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "overrides.json"), "w", encoding="utf-8") as overrides:
        json.dump(QUIET_LAB, overrides, indent=2)


def first_notebook(language="en"):
    """The notebook `lab` opens: notebooks/01_... in English, notebooks/<language>/01_... otherwise."""
    folder = ["notebooks"] if language == LANGUAGES[0] else ["notebooks", language]
    return os.path.join(*(folder + [FIRST_NOTEBOOK]))


def language_option(lab_args):
    """(`--lang` of `lab`, the other arguments for JupyterLab): `--lang fr` or `--lang=fr`, English if absent.
    An unknown language is a ValueError whose text is the one line `main` prints."""
    args, language = list(lab_args), LANGUAGES[0]
    for index, arg in enumerate(args):
        if arg == "--lang" or arg.startswith("--lang="):
            value = arg.partition("=")[2] if "=" in arg else (args[index + 1] if index + 1 < len(args) else "")
            del args[index:index + (1 if "=" in arg else 2)]
            language = value.strip().lower()
            break
    if language not in LANGUAGES:
        raise ValueError("--lang takes one of {}; got {!r}".format(", ".join(LANGUAGES), language))
    return language, args


def lab_command(python, lab_args=(), language="en"):
    """`jupyter lab` on the first notebook of the course in `language`, with the options that followed `lab`."""
    command = [python, "-m", "jupyter", "lab", first_notebook(language)] + list(lab_args)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI machines are often root; JupyterLab refuses unless told
    return command


def open_lab(python, lab_args=(), language="en"):
    quiet_jupyterlab()
    say(word("opening"))
    return hand_over(lab_command(python, lab_args, language))


def hand_over(command, system=None):
    """Run `command` in this script's place, so that the terminal talks to it alone.

    Were this script to wait for JupyterLab as a child, stopping it would go wrong both ways: Ctrl+C
    reaches both processes, and this one dies of it with a KeyboardInterrupt traceback printed under
    JupyterLab's own shutdown question; a signal sent to this script (SIGTERM, a closed terminal)
    kills it alone and leaves JupyterLab running on its port. On Linux and macOS, `os.execv` makes
    JupyterLab this very process (same pid, same terminal), so every key and signal is its own. On
    Windows, exec starts a new process and returns the prompt at once, so there we wait for it instead:
    the console hands Ctrl+C to every process attached to it, JupyterLab included, and this script only
    must not die of its own copy; it then exits with JupyterLab's status.
    """
    os.chdir(ROOT)
    if (system or platform.system()) != "Windows":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(command[0], command)  # does not return
    return wait_for(command)


def wait_for(command):
    """Start `command` and wait for it, through any number of Ctrl+C (they are the child's to answer)."""
    process = subprocess.Popen(command, cwd=ROOT)
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:
            continue  # the same Ctrl+C reached JupyterLab, which asks whether to stop, or stops


def run_tests(python, pytest_args):
    if platform.system() == "Linux" and shutil.which("bash"):
        subprocess.check_call(["bash", os.path.join("scripts", "install_system_deps.sh")], cwd=ROOT)
        hub_environment(python)
    else:
        say("not Linux: Debian's chromium cannot be installed here, so the browser tests will be skipped")
    compile_the_course(python)
    # One test file per worker: nbval's cells of one notebook share a kernel and must never be split.
    return subprocess.call([python, "-m", "pytest", "-n", str(test_workers()), "--dist", "loadfile"] + pytest_args,
                           cwd=ROOT)


def hub_environment(python, venv=HUB_VENV):
    """.venv-hub: the course's venv seen through a .pth file, with JupyterHub installed on top (tests/hub/).

    Why apart: JupyterHub needs aiohttp, and the SDK imports aiohttp whenever it can (0.2 s more for every kernel
    of the suite, and 40 modules over the notebook side's budget, tests/test_packaging.py). A hub's user
    environment has it; the course's own venv does not, so the hub's learners run here and the rest there."""
    stamp = os.path.join(venv, STAMP)
    fingerprint = install_fingerprint(False) + ":" + hashlib.sha256(
        open(os.path.join(ROOT, HUB_REQUIREMENTS), "rb").read()).hexdigest()
    if os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == fingerprint:
        return
    hub_python = venv_python(venv)
    if not os.path.exists(hub_python):
        subprocess.check_call([python, "-m", "venv", venv])
    paths = [subprocess.check_output([each, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     universal_newlines=True).strip() for each in (python, hub_python)]
    with open(os.path.join(paths[1], "looplab-course.pth"), "w", encoding="utf-8") as pth:
        pth.write("import site; site.addsitedir({!r})\n".format(paths[0]))  # its .pth files too: the editable course
    subprocess.check_call([hub_python, "-m", "pip", "install", "--quiet", "-r", HUB_REQUIREMENTS], cwd=ROOT)
    with open(stamp, "w", encoding="utf-8") as done:
        done.write(fingerprint)


def test_workers():
    """One pytest worker more than this computer has cores.

    The suite is CPU-bound, but each worker also waits: for a kernel or a browser to answer, a sandbox to
    start, a subprocess to exit. With one worker per core (xdist's `-n auto`) the cores were idle about a
    tenth of the time (2 cores: 737 s of CPU in 424 s); a third worker fills those gaps (373 s, back to back).
    It never did worse: on a slower afternoon, 468 s against 466 s."""
    return (os.cpu_count() or 1) + 1


# The course's own modules, as the suite's processes import them from the checkout (the editable install).
COURSE_PACKAGES = ("looplab", "authoring", "tests", "benchmarks")


def compile_the_course(python):
    """Write the .pyc of the course's own modules once, before the suite starts its hundreds of processes
    (kernels, graders, notebook runs), each of which imports them.

    pip compiles the packages it installs, but not a checkout installed editable: Python compiles those
    sources at first import and writes the .pyc itself, unless the environment says not to
    (PYTHONDONTWRITEBYTECODE, which many container images set). Then every process compiled every module
    again. compileall writes them whatever that says (quietly; up-to-date files are skipped), and Python
    still reads them."""
    subprocess.check_call([python, "-m", "compileall", "-q", "-j", "0"] + list(COURSE_PACKAGES), cwd=ROOT)


def main(argv):
    commands = ("lab", "test", "setup", "setup-dev")
    if not argv or argv[0] not in commands:
        print("usage: python3 scripts/bootstrap.py {lab|test|setup|setup-dev} "
              "[--lang fr and JupyterLab options for lab, pytest arguments for test]")
        return 2
    command = argv[0]
    language = LANGUAGES[0]
    if command == "lab":
        try:
            language, argv = language_option(argv[1:])
        except ValueError as error:
            print("bootstrap: {}".format(error), file=sys.stderr)
            return 2
        argv = ["lab"] + argv
    SPEAKING[0] = language  # every line from here on, the too-old Python's included
    problem = version_problem(sys.version_info, sys.executable, platform.system())
    if problem:
        print(problem, file=sys.stderr)
        return 1
    try:
        python = ensure_venv()
        if not install(python, dev=command in ("test", "setup-dev")):
            return 1
    except subprocess.CalledProcessError as error:  # one line, never a traceback
        print("bootstrap: " + word("step_failed", command=" ".join(map(str, error.cmd))), file=sys.stderr)
        return 1
    if command == "lab":
        return open_lab(python, argv[1:], language)
    if command == "test":
        return run_tests(python, argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
