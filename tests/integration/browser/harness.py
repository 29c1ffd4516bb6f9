"""Drive a real JupyterLab in headless Chromium for byre_jupyter's browser tests.

Three pieces, used through the fixtures in ``conftest.py``:

* :class:`LabServer` starts ``jupyter lab`` from the running interpreter's environment on a
  free 127.0.0.1 port with every Jupyter/IPython directory isolated under a temp dir, waits
  for ``/api/status``, talks to the REST API and stops the server with all its descendants.
  :class:`NotebookServer` does the same for Notebook 7 (``jupyter notebook``).
* :func:`launch_chromium` launches Debian's ``/usr/bin/chromium`` through Playwright's sync
  API (never a Playwright-downloaded browser: this network only reaches package registries).
* :class:`LabPage` is one browser tab on Lab. It opens notebooks built with nbformat, runs
  cells through ``window.jupyterapp`` (``--LabApp.expose_app_in_browser``), clicks widgets,
  presses the real toolbar interrupt button, saves, and records every iopub message the
  frontend receives (type, parent, cell, size, timestamps) so tests can count messages per
  cell and observe intermediate output states.

Every wait is bounded and driven by an event or a poll of real state; no fixed sleeps.
docs/kernel.md has what these were first used to measure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import psutil
from support.waiting import poll

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page, Playwright

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium's many connections out are refused by this
# closed test network, and each one waits for its timeout. Playwright adds --headless itself.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

# JupyterLab user settings written into the isolated settings dir: no news/update toasts, no
# extension manager (both would call out to the network), no autosave racing explicit saves,
# and every cell attached to the DOM so locators find off-screen cells too.
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/extensionmanager-extension/plugin": {"enabled": False},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


class HarnessError(AssertionError):
    """A harness wait or request failed; the message says what was seen instead."""


def wait_until(
    check: Any,
    timeout: float,
    what: str,
    *,
    interval: float = 0.05,
    detail: Callable[[], str] | None = None,
) -> Any:
    """:func:`support.waiting.poll` for the browser tests: a timeout is a HarnessError."""
    return poll(check, timeout, what, interval=interval, detail=detail, error=HarnessError)


def _checkout_labextension(home: Path) -> Path | None:
    """A Jupyter path holding this checkout's own build of the bridge extension, or None.

    The environment's copy of the extension was put there by the editable install of one
    checkout; a test run from another (a worktree, a rebuilt TypeScript) must load the build
    beside the code it imports. ``JUPYTER_PATH`` comes before every other data directory, and
    the first ``labextensions/<name>`` found wins.
    """
    build = REPO / "byre_jupyter" / "labextension"
    if not (build / "package.json").is_file():
        return None
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "byre-jupyter-bridge"
    if _bundles(installed) == _bundles(build):
        return None  # the environment's copy is this build: load it where pip installed it
    path = home / "jupyter-path"
    link = path / "labextensions" / "byre-jupyter-bridge"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink():
        link.symlink_to(build, target_is_directory=True)
    return path


def _bundles(extension: Path) -> set[str]:
    """The names of a built extension's bundles, which carry their content's hash."""
    static = extension / "static"
    return {f.name for f in static.iterdir()} if static.is_dir() else set()


# --------------------------------------------------------------------------------------------
# Lab server


class LabServer:
    """``jupyter lab`` in an isolated environment under ``base_dir``.

    ``extra_env`` is added to the server's environment, which the kernels it starts inherit
    (e.g. ``ANTHROPIC_BASE_URL`` of a scripted API, ``BYRE_CLAUDE_PATH``).
    """

    #: Which frontend this server serves: "lab" (JupyterLab) or "notebook" (Notebook 7).
    frontend = "lab"

    def __init__(self, base_dir: Path, extra_env: Mapping[str, str] | None = None) -> None:
        self.base_dir = Path(base_dir)
        self.root_dir = self.base_dir / "root"
        self.home = self.base_dir / "home"
        self.token = secrets.token_hex(16)
        self.log_path = self.base_dir / "lab.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.env = self._make_env(dict(extra_env or {}))

    def _make_env(self, extra: dict[str, str]) -> dict[str, str]:
        env = dict(os.environ)
        # Inherited Jupyter/IPython locations would break the isolation.
        for key in list(env):
            if key.startswith(("JUPYTER", "JPY_")) or key in {"IPYTHONDIR", "MPLBACKEND"}:
                del env[key]
        h = self.home
        env.update(
            HOME=str(h),
            XDG_CONFIG_HOME=str(h / ".config"),
            XDG_CACHE_HOME=str(h / ".cache"),
            XDG_DATA_HOME=str(h / ".local" / "share"),
            XDG_RUNTIME_DIR=str(h / "xdg-runtime"),
            JUPYTER_CONFIG_DIR=str(h / "jupyter-config"),
            JUPYTER_DATA_DIR=str(h / "jupyter-data"),
            JUPYTER_RUNTIME_DIR=str(h / "jupyter-runtime"),
            IPYTHONDIR=str(h / "ipython"),
            JUPYTERLAB_SETTINGS_DIR=str(h / "lab-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(h / "lab-workspaces"),
            # The kernelspec and lab extensions come from this interpreter's prefix.
            JUPYTER_PREFER_ENV_PATH="1",
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            PYDEVD_DISABLE_FILE_VALIDATION="1",
            PYTHONUNBUFFERED="1",
        )
        own = _checkout_labextension(h)
        if own is not None:
            env["JUPYTER_PATH"] = str(own)
        env.update(extra)
        return env

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> LabServer:
        for key in (
            "JUPYTER_CONFIG_DIR",
            "JUPYTER_DATA_DIR",
            "JUPYTER_RUNTIME_DIR",
            "IPYTHONDIR",
            "JUPYTERLAB_WORKSPACES_DIR",
            "XDG_RUNTIME_DIR",
        ):
            Path(self.env[key]).mkdir(parents=True, exist_ok=True)
        Path(self.env["XDG_RUNTIME_DIR"]).chmod(0o700)
        self.root_dir.mkdir(parents=True, exist_ok=True)
        settings = Path(self.env["JUPYTERLAB_SETTINGS_DIR"])
        for name, values in LAB_SETTINGS.items():
            f = settings / f"{name}.jupyterlab-settings"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(values))
        cmd = [
            *self._command(),
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            "--ServerApp.port=0",  # the OS picks a free port; read back from jpserver-*.json
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
        ]
        log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.proc = subprocess.Popen(
            cmd,
            env=self.env,
            cwd=self.root_dir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self.port = wait_until(
                self._read_port, timeout, "jupyter lab to write its port", detail=self.log_tail
            )
            wait_until(self._status_ok, timeout, "GET /api/status", detail=self.log_tail)
        except BaseException:
            self.stop()
            raise
        return self

    def _command(self) -> list[str]:
        return [
            str(Path(sys.executable).parent / "jupyter-lab"),
            "--LabApp.expose_app_in_browser=True",
        ]

    def _read_port(self) -> int | None:
        self._check_alive()
        for f in Path(self.env["JUPYTER_RUNTIME_DIR"]).glob("jpserver-*.json"):
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(f.read_text())
                if info.get("pid") == self.proc.pid and info.get("port"):  # type: ignore[union-attr]
                    return int(info["port"])
        return None

    def _status_ok(self) -> bool:
        self._check_alive()
        try:
            self.api("GET", "api/status", timeout=2)
        except (OSError, HarnessError):
            return False
        return True

    def _check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise HarnessError(f"jupyter lab exited with {self.proc.returncode}\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no lab log)"
        return "--- lab.log (tail) ---\n" + "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """Shut down kernels and server; terminate, then kill, anything left. Idempotent."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            family = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        if proc.poll() is None and self.port:
            # Graceful: the server shuts its kernels down, then exits.
            with contextlib.suppress(OSError, HarnessError):
                self.api("POST", "api/shutdown", timeout=5)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                proc.wait(timeout=timeout / 2)
                break
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
        proc.wait(timeout=timeout)
        # Kernels and their children run in sessions of their own: reap them by pid.
        alive = [p for p in family if p.is_running()]
        for p in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.terminate()
        _, alive = psutil.wait_procs(alive, timeout=5)
        for p in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        psutil.wait_procs(alive, timeout=5)
        self._log.close()

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def descendants(self) -> list[psutil.Process]:
        if self.proc is None:
            return []
        children: list[psutil.Process] = psutil.Process(self.proc.pid).children(recursive=True)
        return children

    # -- REST ----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def url(self, path: str, **query: str) -> str:
        q = urllib.parse.urlencode({**query, "token": self.token})
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path.lstrip('/')}{sep}{q}"

    def api(self, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base_url + path.lstrip("/"),
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raise HarnessError(f"{method} /{path} -> {e.code}: {e.read()[:500]!r}") from e
        return json.loads(raw) if raw else None

    def _contents_path(self, path: str) -> str:
        return "api/contents/" + urllib.parse.quote(path)

    def put_notebook(self, path: str, nb: nbformat.NotebookNode) -> None:
        parent = str(Path(path).parent)
        if parent not in ("", "."):
            self.api("PUT", self._contents_path(parent), {"type": "directory"})
        self.api(
            "PUT", self._contents_path(path), {"type": "notebook", "format": "json", "content": nb}
        )

    def get_notebook(self, path: str) -> nbformat.NotebookNode:
        model = self.api("GET", self._contents_path(path) + "?content=1&type=notebook")
        return _as_notebook(model["content"])

    def shutdown_sessions(self, paths: set[str] | None = None) -> None:
        for s in self.api("GET", "api/sessions"):
            if paths is None or s.get("path") in paths:
                with contextlib.suppress(HarnessError):
                    self.api("DELETE", f"api/sessions/{s['id']}")

    def jupyter(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a ``jupyter`` subcommand in this server's isolated environment."""
        jup = Path(sys.executable).parent / "jupyter"
        return subprocess.run(
            [str(jup), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


class NotebookServer(LabServer):
    """``jupyter notebook`` (Notebook 7) in the same isolated environment and token/port scheme.

    Notebook 7 is built from JupyterLab's packages (the same notebook panel, settings and
    ``window.jupyterapp``), but shows one notebook per page at ``/notebooks/<path>``.
    """

    frontend = "notebook"

    def _command(self) -> list[str]:
        return [
            str(Path(sys.executable).parent / "jupyter-notebook"),
            "--JupyterNotebookApp.expose_app_in_browser=True",
        ]


# --------------------------------------------------------------------------------------------
# Browser


def chromium_available() -> bool:
    return CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)


def launch_chromium(pw: Playwright, user_data_dir: Path, **kwargs: Any) -> BrowserContext:
    """Debian's chromium, headless, fresh profile (Playwright refuses --user-data-dir)."""
    kwargs.setdefault("viewport", {"width": 1400, "height": 1000})
    ctx = pw.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_ARGS,
        **kwargs,
    )
    ctx.set_default_timeout(30_000)
    return ctx


# In-page helper, installed once per tab after Lab has restored. Notebook panels are looked up
# by path; iopub messages are attributed to cells through the execute_request's
# metadata.cellId that JupyterLab sends (seen on the kernel's anyMessage signal).
_HELPER_JS = r"""
() => {
  if (window.__byre) return;
  const app = window.jupyterapp;
  const B = (window.__byre = {
    panels: {}, runs: {}, iopub: [], sent: [], reqCells: {}, watchers: {},
  });
  B.panel = (path) => {
    const known = B.panels[path];
    if (known && !known.isDisposed) return known;
    for (const w of app.shell.widgets('main')) {
      if (w.context && w.context.path === path && w.content && w.content.widgets) {
        B.panels[path] = w;
        return w;
      }
    }
    throw new Error('no open notebook panel for ' + path);
  };
  B.cell = (path, i) => {
    const cells = B.panel(path).content.widgets;
    if (i < 0 || i >= cells.length) throw new Error(`cell ${i} out of range (${cells.length})`);
    return cells[i];
  };
  B.cellKey = (path, i) => path + '#' + B.cell(path, i).model.id;
  B.kernel = (path) => {
    const s = B.panel(path).sessionContext.session;
    return s ? s.kernel : null;
  };
  B.hook = (path) => {
    const sc = B.panel(path).sessionContext;
    const connect = () => {
      const k = sc.session && sc.session.kernel;
      if (!k || k.__byreHooked) return;
      k.__byreHooked = true;
      k.anyMessage.connect((_, args) => {
        const m = args.msg;
        if (args.direction === 'send' && m.header.msg_type === 'execute_request') {
          B.reqCells[m.header.msg_id] = (m.metadata && m.metadata.cellId) || null;
        }
        if (args.direction === 'send' && m.header.msg_type === 'comm_msg') {
          const d = (m.content && m.content.data) || {};
          B.sent.push({ path, t: performance.now(), msg_id: m.header.msg_id,
                        method: d.method || null, event: (d.content && d.content.event) || null,
                        type: d.type || null, name: d.name || null,
                        state: d.state ? Object.keys(d.state) : null });
        }
      });
      k.iopubMessage.connect((_, m) => {
        const parent = m.parent_header || {};
        const c = m.content || {};
        let size = 0;
        try { size = JSON.stringify(c).length; } catch (e) { size = -1; }
        for (const b of m.buffers || []) size += b.byteLength || 0;
        B.iopub.push({
          path, t: performance.now(), wall: Date.now(),
          msg_type: m.header.msg_type, msg_id: m.header.msg_id,
          parent_msg_id: parent.msg_id || null, parent_msg_type: parent.msg_type || null,
          cell_id: B.reqCells[parent.msg_id] || null, size,
          execution_state: c.execution_state || null,
          comm_method: (c.data && c.data.method) || null,
          stream: m.header.msg_type === 'stream' ? c.name : null,
        });
      });
    };
    connect();
    sc.kernelChanged.connect(connect);
  };
  B.open = async (path) => {
    const w = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
    B.panels[path] = w;
    await w.context.ready;
    await w.sessionContext.ready;
    B.hook(path);
    return w.id;
  };
  // Notebook 7: the page at /notebooks/<path> opens its notebook itself; wait for its panel.
  B.attach = async (path) => {
    let w = null;
    while (!w) {
      try { w = B.panel(path); } catch (e) { await new Promise(r => setTimeout(r, 50)); }
    }
    await w.context.ready;
    await w.sessionContext.ready;
    B.hook(path);
    return w.id;
  };
  B.activate = (path) => {
    const w = B.panel(path);
    app.shell.activateById(w.id);
    return w;
  };
  B.track = (key, promise) => {
    const run = (B.runs[key] = { done: false, ok: null, error: null, t0: performance.now() });
    promise.then(
      (ok) => { run.done = true; run.ok = ok !== false; run.t1 = performance.now(); },
      (e) => {
        run.done = true; run.ok = false; run.error = String(e); run.t1 = performance.now();
      },
    );
  };
  B.runCell = (path, i) => {
    const w = B.activate(path);
    w.content.activeCellIndex = i;
    w.content.deselectAll();
    const key = B.cellKey(path, i);
    B.track(key, app.commands.execute('notebook:run-cell'));
    return key;
  };
  B.runAll = (path) => {
    B.activate(path);
    const key = path + '#*';
    B.track(key, app.commands.execute('notebook:run-all-cells'));
    return key;
  };
  B.outputText = (path, i) => {
    const c = B.cell(path, i);
    return c.outputArea ? c.outputArea.node.innerText : '';
  };
  B.tagOutput = (path, i) => {
    const c = B.cell(path, i);
    const key = B.cellKey(path, i);
    c.node.setAttribute('data-byre-cell', key);
    if (c.outputArea) c.outputArea.node.setAttribute('data-byre-output', key);
    return key;
  };
  B.watch = (path, i) => {
    const c = B.cell(path, i);
    const key = B.cellKey(path, i);
    const old = B.watchers[key];
    if (old) old.obs.disconnect();
    const rec = (B.watchers[key] = { states: [], obs: null });
    const snap = () => {
      const text = c.outputArea.node.innerText;
      const last = rec.states[rec.states.length - 1];
      if (!last || last.text !== text) rec.states.push({ t: performance.now(), text });
    };
    snap();
    rec.obs = new MutationObserver(snap);
    rec.obs.observe(c.outputArea.node, { subtree: true, childList: true, characterData: true });
    return key;
  };
}
"""


class LabPage:
    """One Playwright tab on JupyterLab, working on the most recently opened notebook."""

    def __init__(self, page: Page, server: LabServer) -> None:
        self.page = page
        self.server = server
        self.path: str | None = None
        self.opened: set[str] = set()
        self.console: list[str] = []
        self._last_run: dict[int | str, str] = {}
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    # -- Lab -----------------------------------------------------------------------------

    @property
    def frontend(self) -> str:
        """ "lab" (JupyterLab) or "notebook" (Notebook 7)."""
        return self.server.frontend

    def goto_lab(self, timeout: float = 90.0) -> LabPage:
        """Load the frontend's start page: a fresh Lab workspace, or Notebook 7's file tree."""
        if self.frontend == "notebook":
            return self._load(self.server.url("tree"), timeout)
        workspace = "byre-" + secrets.token_hex(4)  # fresh layout, nothing restored
        return self._load(self.server.url(f"lab/workspaces/{workspace}", reset=""), timeout)

    def _load(self, url: str, timeout: float) -> LabPage:
        self.page.goto(url, timeout=timeout * 1000)
        self.page.wait_for_function("() => !!window.jupyterapp", timeout=timeout * 1000)
        self._evaluate(
            "async () => { await window.jupyterapp.restored; }", None, timeout, "Lab to restore"
        )
        self.page.evaluate(_HELPER_JS)
        return self

    def has_plugin(self, plugin_id: str) -> bool:
        return bool(self.page.evaluate("id => window.jupyterapp.hasPlugin(id)", plugin_id))

    def _evaluate(self, fn: str, arg: Any, timeout: float, what: str) -> Any:
        """``page.evaluate(fn, arg)``, but a returned promise may take at most ``timeout`` s
        (a bare evaluate waits forever, e.g. on a promise stuck behind a Lab dialog)."""
        from playwright.sync_api import Error as PWError

        wrapped = (
            "async ([arg, ms, what]) => { let timer;"
            " const limit = new Promise((_, reject) => { timer = setTimeout("
            " () => reject(new Error(`byre-timeout after ${ms} ms: ${what}`)), ms); });"
            f" try {{ return await Promise.race([({fn})(arg), limit]); }}"
            " finally { clearTimeout(timer); } }"
        )
        try:
            return self.page.evaluate(wrapped, [arg, timeout * 1000, what])
        except PWError as e:
            if "byre-timeout" in str(e):
                raise HarnessError(f"timed out after {timeout:g}s waiting for {what}") from e
            raise

    def _js(self, expr: str, *args: Any, timeout: float = 60.0, what: str = "") -> Any:
        """Evaluate ``(path, ...args) => expr`` on the current notebook (bounded)."""
        arglist = ", ".join(f"a{i}" for i in range(len(args)))
        fn = f"([path{', ' if args else ''}{arglist}]) => {{ const B = window.__byre; {expr} }}"
        return self._evaluate(fn, [self._need_path(), *args], timeout, what or expr[:80])

    def _need_path(self) -> str:
        if self.path is None:
            raise HarnessError("no notebook open: call open_notebook() first")
        return self.path

    def _wait_js(
        self, predicate: str, arg: Any, timeout: float, what: str, detail: Any = None
    ) -> None:
        from playwright.sync_api import TimeoutError as PWTimeout

        try:
            self.page.wait_for_function(predicate, arg=arg, timeout=timeout * 1000, polling=50)
        except PWTimeout as e:
            extra = f"\n{detail()}" if detail else ""
            raise HarnessError(f"timed out after {timeout:g}s waiting for {what}{extra}") from e

    # -- notebooks -----------------------------------------------------------------------

    def open_notebook(
        self,
        nb: nbformat.NotebookNode,
        path: str | None = None,
        kernel_env: Mapping[str, str] | None = None,
        timeout: float = 120.0,
    ) -> str:
        """Upload ``nb`` via the contents API, open it in Lab, wait for an idle kernel.

        ``kernel_env`` is set in the kernel's ``os.environ`` (silently, before any cell runs),
        for per-test settings on the shared server.
        """
        path = path or f"nb-{secrets.token_hex(4)}.ipynb"
        nb = _as_notebook(json.loads(json.dumps(nb)))
        nb.metadata.setdefault("kernelspec", dict(KERNELSPEC))
        nbformat.validate(nb)
        self.server.put_notebook(path, nb)
        self._open_existing(path, timeout)
        if kernel_env:
            code = f"import os as _o; _o.environ.update({dict(kernel_env)!r}); del _o"
            status = self._js(
                "return B.kernel(path).requestExecute("
                "{code: a0, silent: true, store_history: false}).done.then(r => r.content.status);",
                code,
                what="setting kernel_env",
            )
            if status != "ok":
                raise HarnessError(f"setting kernel_env failed: {status}")
        return path

    def join_notebook(self, path: str, timeout: float = 120.0) -> str:
        """Open the file ``path`` another page opened (its kernel session is shared): a second
        person's view of the same notebook."""
        self._last_run.clear()
        self._open_existing(path, timeout)
        return path

    def reopen_notebook(
        self, path: str | None = None, timeout: float = 120.0, idle: bool = True
    ) -> str:
        """Reload Lab (fresh workspace, new page state) and open the existing file ``path``
        (default: the current notebook) without uploading it; waits for an idle kernel
        (``idle`` False: not, for a kernel still running a cell the old page ran)."""
        path = path or self._need_path()
        if self.frontend == "lab":
            self.goto_lab(timeout)
        self._last_run.clear()
        self._open_existing(path, timeout, idle)
        return path

    def _open_existing(self, path: str, timeout: float, idle: bool = True) -> None:
        """Open the file ``path`` with a kernel: in Lab's shell, or as Notebook 7's page."""
        self.path = path
        self.opened.add(path)
        if self.frontend == "notebook":
            self._load(self.server.url("notebooks/" + urllib.parse.quote(path)), timeout)
            self._js("return B.attach(path);", timeout=timeout, what=f"Notebook 7 to open {path}")
        else:
            self._js("return B.open(path);", timeout=timeout, what=f"Lab to open {path}")
        if idle:
            self.wait_for_kernel_idle(timeout)

    def wall_clock_offset_ms(self) -> float:
        """``Date.now() - performance.now()`` in the page: add it to a ``t`` of
        :meth:`output_states` or :meth:`iopub_messages` to get epoch milliseconds."""
        return float(self.page.evaluate("() => Date.now() - performance.now()"))

    def kernel_status(self) -> str | None:
        return self._js("const k = B.kernel(path); return k ? k.status : null;")  # type: ignore[no-any-return]

    def wait_for_kernel_idle(self, timeout: float = 60.0) -> None:
        self._wait_js(
            "([path]) => { const k = window.__byre.kernel(path); "
            "return k && k.status === 'idle'; }",
            [self._need_path()],
            timeout,
            "the kernel to be idle",
            detail=lambda: f"kernel status: {self.kernel_status()}\n{self.server.log_tail(15)}",
        )

    def set_source(self, i: int, source: str) -> None:
        """Replace cell ``i``'s text, as typing in it would."""
        self._js("B.cell(path, a0).model.sharedModel.setSource(a1); return true;", i, source)

    def cell_count(self) -> int:
        return int(self._js("return B.panel(path).content.widgets.length;"))

    # -- running -------------------------------------------------------------------------

    def run_cell(self, i: int, wait: bool = True, timeout: float = 60.0) -> None:
        """Run cell ``i`` (like Shift+Enter without advancing); by default wait until done."""
        self._last_run[i] = self._js("return B.runCell(path, a0);", i)
        if wait:
            self.wait_for_cell(i, timeout)

    def run_all(self, wait: bool = True, timeout: float = 300.0) -> None:
        self._last_run["*"] = self._js("return B.runAll(path);")
        if wait:
            self.wait_for_cell("*", timeout)

    def wait_for_cell(self, i: int | str, timeout: float = 60.0) -> bool:
        """Wait until the last run of cell ``i`` (or ``"*"`` for run_all) finished.

        Returns True when it ran without error (False after an error or interrupt).
        """
        key = self._last_run.get(i)
        if key is None:
            raise HarnessError(f"cell {i} was not run through this LabPage")
        self._wait_js(
            "key => { const r = window.__byre.runs[key]; return r && r.done; }",
            key,
            timeout,
            f"cell {i} to finish",
            detail=lambda: f"output so far: {self._safe_output(i)!r}",
        )
        run = self.page.evaluate("key => window.__byre.runs[key]", key)
        return bool(run["ok"])

    def cell_running(self, i: int) -> bool:
        key = self._last_run.get(i)
        if key is None:
            return False
        return bool(
            self.page.evaluate(
                "key => { const r = window.__byre.runs[key]; return !!r && !r.done; }", key
            )
        )

    def execution_state(self, i: int) -> str:
        """The cell model's executionState: 'running' or 'idle'."""
        return str(self._js("return B.cell(path, a0).model.executionState;", i))

    # -- outputs -------------------------------------------------------------------------

    def output_text(self, i: int) -> str:
        """The rendered (visible) text of cell ``i``'s output area."""
        return str(self._js("return B.outputText(path, a0);", i))

    def _safe_output(self, i: int | str) -> str:
        if not isinstance(i, int):
            return ""
        try:
            return self.output_text(i)
        except Exception as e:  # only enriches a timeout message
            return f"<unavailable: {e}>"

    def wait_for_output_text(self, i: int, text: str, timeout: float = 30.0) -> str:
        self._wait_js(
            "([path, i, text]) => window.__byre.outputText(path, i).includes(text)",
            [self._need_path(), i, text],
            timeout,
            f"{text!r} in the output of cell {i}",
            detail=lambda: f"output of cell {i}: {self._safe_output(i)!r}",
        )
        return self.output_text(i)

    def output_json(self, i: int) -> list[dict[str, Any]]:
        """Cell ``i``'s outputs as the model holds them (nbformat JSON, what a save writes)."""
        return list(self._js("return B.cell(path, a0).model.outputs.toJSON();", i))

    def output_locator(self, i: int) -> Locator:
        key = self._js("return B.tagOutput(path, a0);", i)
        return self.page.locator(f'[data-byre-output="{key}"]')

    def cell_locator(self, i: int) -> Locator:
        key = self._js("return B.tagOutput(path, a0);", i)
        return self.page.locator(f'[data-byre-cell="{key}"]')

    def _find_in_output(
        self, i: int, role: str | None, name: str | None, selector: str | None, text: str | None
    ) -> Locator:
        out = self.output_locator(i)
        if selector:
            return out.locator(selector)
        if role:
            return out.get_by_role(role, name=name, exact=name is not None)  # type: ignore[arg-type]
        if text:
            return out.get_by_text(text, exact=True)
        raise HarnessError("give role (+name), selector or text")

    def click_in_output(
        self,
        i: int,
        role: str | None = "button",
        name: str | None = None,
        *,
        selector: str | None = None,
        text: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Click an element inside cell ``i``'s output, e.g. ``role="button", name="Stop"``."""
        loc = self._find_in_output(i, None if (selector or text) else role, name, selector, text)
        loc.click(timeout=timeout * 1000)

    def select_in_output(self, i: int, label: str, value: str, timeout: float = 30.0) -> None:
        """Choose option ``value`` (its visible text) in the dropdown labelled ``label``."""
        out = self.output_locator(i)
        loc = out.get_by_label(label, exact=True)
        if loc.count() == 0:  # a Dropdown with only a tooltip: <select title="label">
            loc = out.locator(f"select[title={json.dumps(label)}]")
        if loc.count() == 0:  # ipywidgets without label/for wiring: find by the label text
            loc = out.locator(".widget-dropdown", has=self.page.get_by_text(label, exact=True))
            loc = loc.locator("select")
        loc.select_option(label=value, timeout=timeout * 1000)

    def watch_output(self, i: int) -> None:
        """Start recording every distinct rendered text state of cell ``i``'s output."""
        self._js("return B.watch(path, a0);", i)

    def output_states(self, i: int) -> list[dict[str, Any]]:
        """States recorded since :meth:`watch_output`: ``[{"t": ms, "text": str}, ...]``."""
        return list(
            self._js("const w = B.watchers[B.cellKey(path, a0)]; return w ? w.states : [];", i)
        )

    # -- kernel control ------------------------------------------------------------------

    def interrupt_kernel(self, via: str = "toolbar") -> None:
        """Interrupt the kernel: click the real toolbar ■ (default) or run the Lab command."""
        if via == "toolbar":
            panel_id = self._js("return B.activate(path).id;")
            button = self.page.locator(
                f'[id="{panel_id}"] .jp-Toolbar [data-command="notebook:interrupt-kernel"]'
            )
            button.click()
        elif via == "command":
            self._js(
                "B.activate(path); "
                "return window.jupyterapp.commands.execute('notebook:interrupt-kernel');"
            )
        else:
            raise ValueError(f"via must be 'toolbar' or 'command', not {via!r}")

    def restart_kernel(self, timeout: float = 60.0) -> None:
        self._js("return B.kernel(path).restart();", timeout=timeout, what="kernel restart")
        self.wait_for_kernel_idle(timeout)

    # -- saving --------------------------------------------------------------------------

    def save(self) -> nbformat.NotebookNode:
        """Save from the browser, then return the file as read back through the contents API."""
        self._js("return B.panel(path).context.save();", what="the notebook to save")
        return self.server.get_notebook(self._need_path())

    # -- iopub recorder ------------------------------------------------------------------

    def iopub_messages(self, cell: int | None = None) -> list[dict[str, Any]]:
        """iopub messages received for the current notebook, optionally only cell ``cell``'s.

        Each: msg_type, msg_id, parent_msg_id, parent_msg_type, cell_id, size (JSON length of
        content + buffer bytes), t (performance.now() ms), wall (epoch ms), execution_state,
        comm_method, stream.
        """
        return list(
            self._js(
                "const id = a0 === null ? null : B.cell(path, a0).model.id;"
                "return B.iopub.filter(m => m.path === path && (id === null || m.cell_id === id));",
                cell,
            )
        )

    def sent_comm_messages(self) -> list[dict[str, Any]]:
        """comm_msgs the frontend sent (widget updates, clicks, the bridge's events): t, msg_id,
        method, event, state (the keys of an update), type and name (a bridge event's)."""
        return list(self._js("return B.sent.filter(m => m.path === path);"))

    def iopub_counts(self, cell: int | None = None) -> Counter[str]:
        return Counter(m["msg_type"] for m in self.iopub_messages(cell))

    def clear_iopub(self) -> None:
        self.page.evaluate("() => { window.__byre.iopub.length = 0; }")

    # -- artifacts -----------------------------------------------------------------------

    def screenshot(self, name: str) -> Path:
        """Screenshot the page into tests/artifacts/ (gitignored); returns the file path."""
        path = ARTIFACTS / name
        if path.suffix.lower() not in (".png", ".jpg", ".jpeg"):
            path = path.with_suffix(".png")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))
        return path

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.page.close()
        if self.opened:
            with contextlib.suppress(Exception):
                self.server.shutdown_sessions(self.opened)


def _as_notebook(obj: Any) -> nbformat.NotebookNode:
    nb: nbformat.NotebookNode = nbformat.from_dict(obj)  # type: ignore[no-untyped-call]
    return nb


def new_notebook(*sources: str) -> nbformat.NotebookNode:
    """A notebook with one code cell per source, python3 kernelspec."""
    nb: nbformat.NotebookNode = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]  # type: ignore[no-untyped-call]
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    return nb


@contextlib.contextmanager
def lab_server(
    base_dir: Path, extra_env: Mapping[str, str] | None = None, frontend: str = "lab"
) -> Iterator[LabServer]:
    server = (NotebookServer if frontend == "notebook" else LabServer)(base_dir, extra_env)
    server.start()
    try:
        yield server
    finally:
        server.stop()
