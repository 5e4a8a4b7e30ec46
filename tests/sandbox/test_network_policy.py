"""What a world may reach, decided from the configuration: the policy and the allow-list (pure)."""

from __future__ import annotations

import pytest

from failres.config.loading import parse_config
from failres.errors import ConfigError
from failres.sandbox.bridge import parse_request
from failres.sandbox.network import Policy, allowed, effective_policy, local_ports_named, refused_address

BINDING = '[bindings.agent]\ncommand = ["agent"]\n'


def listed(*hosts: str) -> Policy:
    return effective_policy(list(hosts), "on", role="seat")


def test_a_listed_host_is_allowed_on_any_port_and_an_unlisted_one_is_not():
    policy = listed("api.anthropic.com")
    assert allowed(policy, "api.anthropic.com", 443) and allowed(policy, "API.Anthropic.com.", 80)
    assert not allowed(policy, "evil.example", 443)
    assert not allowed(policy, "api.anthropic.com.evil.example", 443)


def test_a_listed_port_is_the_only_port_of_that_host():
    policy = listed("registry.npmjs.org:443")
    assert allowed(policy, "registry.npmjs.org", 443) and not allowed(policy, "registry.npmjs.org", 22)


def test_a_wildcard_names_subdomains_only():
    policy = listed("*.pythonhosted.org")
    assert allowed(policy, "files.pythonhosted.org", 443)
    assert not allowed(policy, "pythonhosted.org.evil", 443) and not allowed(policy, "evilpythonhosted.org", 443)


def test_an_ip_literal_passes_only_when_listed():
    assert not allowed(listed("api.anthropic.com"), "160.79.104.10", 443)
    assert allowed(listed("160.79.104.10"), "160.79.104.10", 443)


def test_the_hosts_loopback_is_reached_only_as_a_listed_local_server_even_when_open():
    open_policy = effective_policy("open", "on", role="seat")
    assert allowed(open_policy, "example.org", 443)
    assert not allowed(open_policy, "127.0.0.1", 11434) and not allowed(open_policy, "localhost", 11434)
    assert not allowed(open_policy, "127.1.2.3", 80) and not allowed(open_policy, "[::1]", 80)
    local = listed("127.0.0.1:11434")
    assert allowed(local, "localhost", 11434) and allowed(local, "127.0.0.1", 11434)
    assert not allowed(local, "127.0.0.1", 11435)


def test_a_name_that_resolves_to_the_loopback_is_refused_at_connect():
    assert refused_address("127.0.0.1") and refused_address("::1") and not refused_address("93.184.216.34")


def test_off_allows_nothing_and_needs_no_forwarder():
    policy = effective_policy("off", "on", role="seat")
    assert not policy.bridged and not allowed(policy, "api.anthropic.com", 443)


def test_defaults_a_known_agent_gets_its_api_hosts_a_gate_none_a_setup_everything():
    claude = effective_policy("", "on", role="seat", program="/home/p/.local/bin/claude")
    assert claude == Policy("list", ("api.anthropic.com",))
    assert effective_policy("", "on", role="seat", program="codex").hosts == (
        "api.openai.com", "chatgpt.com", "auth.openai.com")
    assert effective_policy("", "on", role="seat", program="./tools/agent").kind == "open"
    assert effective_policy("", "on", role="gate").kind == "off"
    assert effective_policy("", "on", role="setup").kind == "open"


def test_a_commands_own_setting_wins_over_sandbox_and_sandbox_over_the_defaults():
    assert effective_policy("", "off", role="seat", program="claude").kind == "off"
    assert effective_policy("open", "off", role="seat").kind == "open"
    assert effective_policy("", ["pypi.org"], role="gate").hosts == ("pypi.org",)
    assert effective_policy(["pypi.org"], "on", role="setup").hosts == ("pypi.org",)


@pytest.mark.parametrize("where", ["binding", "sandbox"])
def test_an_empty_host_list_reaches_no_host_and_never_falls_back_to_open(where: str):
    """`network = []` lists no host: the world reaches none, not a seat's default of everything."""
    text = BINDING + "network = []\n" if where == "binding" else BINDING + "[sandbox]\nnetwork = []\n"
    config = parse_config(text, "cfg.toml")
    own, sandbox = config.bindings["agent"].network, config.sandbox.network
    for role, program in (("seat", "./tools/agent"), ("seat", "claude"), ("gate", ""), ("setup", "")):
        policy = effective_policy(own, sandbox, role=role, program=program)
        assert (policy.kind, policy.hosts) == ("list", ()), (role, program)
        assert not any(allowed(policy, host, 443) for host in ("example.com", "api.anthropic.com", "1.1.1.1"))


def test_a_local_server_named_in_the_agents_settings_is_reachable_unless_off():
    found = local_ports_named(['{"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}}',
                               "openai-api-base: http://localhost:11434/v1", "https://example.org:9/"])
    assert found == (8123, 11434)
    assert effective_policy("", "on", role="seat", program="claude", found_local=found).local_ports == (8123, 11434)
    assert effective_policy("off", "on", role="seat", found_local=found).local_ports == ()


def test_a_connect_request_is_read_as_host_and_port():
    assert parse_request(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\nhello") == (
        "CONNECT", "api.anthropic.com", 443, b"hello")


def test_an_absolute_uri_request_goes_upstream_in_origin_form_and_closes():
    method, host, port, out = parse_request(
        b"GET http://pypi.org/simple/x/ HTTP/1.1\r\nHost: pypi.org\r\nProxy-Authorization: a\r\n"
        b"Connection: keep-alive\r\n\r\n")
    assert (method, host, port) == ("GET", "pypi.org", 80)
    assert out == b"GET /simple/x/ HTTP/1.1\r\nHost: pypi.org\r\nConnection: close\r\n\r\n"


def test_a_request_that_is_not_a_proxy_request_is_refused():
    assert parse_request(b"GET /x HTTP/1.1\r\n\r\n") is None
    assert parse_request(b"CONNECT api.anthropic.com HTTP/1.1\r\n\r\n") is None


@pytest.mark.parametrize(("value", "message"), [
    ('"on"', None), ('"open"', None), ('"off"', None), ('["api.anthropic.com", "127.0.0.1:11434"]', None),
    ('"onn"', 'must be "on", "off", "open" or a list of hosts such as ["api.anthropic.com"], got "onn"'),
    ('["localhost"]', '"localhost": a local server needs its port ("localhost:11434")'),
    ('["api.anthropic.com:99999"]', '"api.anthropic.com:99999": the port must be between 1 and 65535'),
    ('["http://api.anthropic.com"]', '"http://api.anthropic.com" is not a host name, "host:port" or "127.0.0.1:PORT"'),
    ("3", 'expected "on", "off", "open" or an array of hosts, got an integer (3)'),
])
def test_a_network_value_is_checked_when_the_file_is_read(value: str, message: str | None):
    text = BINDING + f"network = {value}\n"
    if message is None:
        parse_config(text, "cfg.toml")
        return
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg.toml")
    assert str(caught.value).startswith(f"cfg.toml: bindings.agent.network")
    assert message in str(caught.value)
