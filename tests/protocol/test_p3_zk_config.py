"""The hiding PCS's configuration and domain separator against the oracle's zk golden files."""

from __future__ import annotations

import pytest

from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.errors import ConfigError
from whirgpu.profiles.p3_whir.zk.config import zk_domain_separator
from whirgpu.profiles.p3_whir.zk.document import read_zk_instance

ZK_GOLDEN = golden_p3_names("z0*.json")


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_config_matches_the_oracle(name):
    doc = load_golden_p3(name)
    config = read_zk_instance(doc).config
    assert config.to_json_dict() == {k: v for k, v in doc["zk_config"].items() if k != "note"}
    assert config.inner.to_json_dict() == doc["config"]


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_domain_separator_matches_the_oracle(name):
    doc = load_golden_p3(name)
    assert zk_domain_separator(read_zk_instance(doc).config) == doc["domain_separator_canonical"]


def test_config_errors_name_upstreams():
    doc = load_golden_p3(ZK_GOLDEN[0])
    from whirgpu.field import KOALABEAR
    from whirgpu.profiles.p3_whir.zk.config import ZkWhirConfig
    from whirgpu.profiles.p3_whir.zk.document import zk_parameters
    n, params, _, _ = zk_parameters(doc["params"])
    with pytest.raises(ConfigError, match="MaskLengthTooSmall"):
        ZkWhirConfig.derive(n, params, KOALABEAR, ell_zk=2)
    with pytest.raises(ConfigError, match="MaskRateTooHigh"):
        ZkWhirConfig.derive(n, params, KOALABEAR, mask_log_inv_rate=0)
