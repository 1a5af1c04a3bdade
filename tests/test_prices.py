"""Prices do not depend on the day: litellm's price map is the installed litellm's own
copy, never the network's, whatever the environment says; and every row says where its
price came from (`price_source`)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_batch import TASKS, BatchServer, shard, suite  # noqa: F401

PROBE = """
import importlib, json, os, sys
importlib.import_module(sys.argv[1])
import litellm
from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info
print(json.dumps({"env": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
                  "info": get_model_cost_map_source_info(),
                  "bundled": os.path.join(os.path.dirname(litellm.__file__),
                                          "model_prices_and_context_window_backup.json")}))
"""


def _blob(path: str) -> str:
    """git's id of a file's bytes, as litellm records the map it loaded."""
    data = Path(path).read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.mark.parametrize("module", ["planaudit.llm.client", "planaudit.estimate",
                                    "planaudit.llm.preflight"])
def test_importing_planaudit_keeps_litellm_off_the_network(module):
    """The environment says to fetch (LITELLM_LOCAL_MODEL_COST_MAP=False) from a URL that
    is a listening socket here: after planaudit's module and then litellm are imported,
    nothing has connected to it, and the map loaded is the bundled file's."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/prices.json"
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "False",
               "LITELLM_MODEL_COST_MAP_URL": url}
        out = subprocess.run([sys.executable, "-c", PROBE, module], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        try:
            listener.accept()[0].close()
            connected = True
        except BlockingIOError:
            connected = False
    said = json.loads(out.stdout.strip().splitlines()[-1])
    assert not connected, "litellm fetched its price map from the network"
    assert said["env"] == "True"
    assert said["info"]["source"] == "local"
    assert said["info"]["source_revision"] == _blob(said["bundled"])


def _model(name: str, model: str, api_base: str | None, **prices) -> dict:
    entry = {"name": name, "model": model, "max_concurrency": 2, "max_retries": 0, **prices}
    if api_base:
        entry.update(api_base=api_base, api_key_env="none")
    return entry


def test_every_row_says_where_its_price_came_from(suite, tmp_path):  # noqa: F811
    """Offline direct on the litellm path (a scripted server): a model priced by the
    config, one priced by litellm's bundled map (gpt-4o), one priced by neither (its
    cost and its price source null); and a reference model (free, said so)."""
    with BatchServer() as srv:
        models = {
            "config": _model("c", "openai/test-model", srv.api_base, input_price=2.0,
                             output_price=8.0),
            f"litellm {version('litellm')}": _model("l", "openai/gpt-4o", srv.api_base),
            None: _model("u", "openai/no-price-planaudit-test", srv.api_base),
            "reference": _model("r", "reference/oracle", None),
        }
        rows = {source: shard(tmp_path, suite, model, cache=model["name"])
                for source, model in models.items()}
    for source, frame in rows.items():
        assert frame.height == len(TASKS) and frame["error"].is_null().all()
        assert frame["price_source"].to_list() == [source] * len(TASKS), source
        assert frame["cost_usd"].is_null().all() == (source is None)
    again = shard(tmp_path, suite, models["config"], cache="c")  # every call a cache hit
    assert again["cache_hits"].to_list() == [1] * len(TASKS)
    assert again["price_source"].to_list() == ["config"] * len(TASKS)
