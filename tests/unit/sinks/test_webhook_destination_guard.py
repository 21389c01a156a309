"""The webhook destination guard: the manager POSTs only where a tenant could anyway.

No test here sends a packet off loopback: the guard's two seams (the resolver names
go through, the socket factory addresses are dialled with) are replaced by recorders
whose socket factory refuses to create any socket, so a guard that failed would show
as a recorded dial, never as traffic.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
import pytest_asyncio
from aiohttp import web
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import glimmer
from glimmer.cli.manager import manager
from glimmer.engine import FakeClient
from glimmer.sinks import FanoutOptions, SinkFanout, send_envelope
from glimmer.sinks.build import envelope_from_run_document
from glimmer.sinks.destinations import (
    APISERVER,
    CLUSTER,
    LINK_LOCAL,
    LOOPBACK,
    METADATA,
    MULTICAST,
    RESERVED,
    UNSPECIFIED,
    DestinationGuard,
    DestinationRefusedError,
    IPAddress,
    manager_guard,
    parse_address,
)
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.fanout import SINKS
from glimmer.sinks.webhook import WebhookTarget, post
from tests.unit.sinks.network import Network
from tests.unit.sinks.receiver import Receiver
from tests.unit.sinks.test_fanout_rules_L5_L7 import NOW, envelope

NS = "team"


async def attempt(url: str, guard: DestinationGuard) -> DeliveryError:
    with pytest.raises(DeliveryError) as caught:
        await post(WebhookTarget(url=url), body=b"{}", delivery_id="d", timestamp=1,
                   timeout=5, guard=guard)  # fmt: skip
    return caught.value


def address(text: str) -> IPAddress:
    found = parse_address(text)
    assert found is not None
    return found


# --- what is refused ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("127.0.0.1", LOOPBACK), ("127.254.1.9", LOOPBACK), ("::1", LOOPBACK),
        ("169.254.169.254", METADATA), ("100.100.100.200", METADATA),
        ("fd00:ec2::254", METADATA), ("169.254.10.1", LINK_LOCAL), ("fe80::1", LINK_LOCAL),
        ("fe80::1%eth0", LINK_LOCAL), ("224.0.0.251", MULTICAST), ("ff02::1", MULTICAST),
        ("0.0.0.0", UNSPECIFIED), ("0.1.2.3", UNSPECIFIED), ("::", UNSPECIFIED),
        ("255.255.255.255", RESERVED), ("240.0.0.1", RESERVED),
    ],
)  # fmt: skip
def test_loopback_link_local_metadata_multicast_unspecified_and_reserved_are_refused_by_default(
    text: str, why: str
) -> None:
    assert DestinationGuard().refusal(address(text), host=text) == why


@pytest.mark.parametrize(
    "text", ["10.1.2.3", "172.16.0.9", "192.168.1.1", "100.64.0.1", "fd12:3456::1",
             "203.0.113.7", "2606:4700::1111"],
)  # fmt: skip
def test_private_ranges_are_not_refused_as_such(text: str) -> None:
    assert DestinationGuard().refusal(address(text), host=text) is None


_V4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
_V6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)


def _flagged(a: IPAddress) -> bool:
    return a.is_loopback or a.is_link_local or a.is_multicast or a.is_unspecified or a.is_reserved


@given(st.one_of(_V4, _V6).filter(_flagged))
def test_every_address_ipaddress_calls_special_is_refused(a: IPAddress) -> None:
    if isinstance(a, ipaddress.IPv6Address) and (a.ipv4_mapped or a in _NAT64):
        return  # judged as the IPv4 address they reach (the next test)
    assert DestinationGuard().refusal(a, host=str(a)) is not None


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


@given(_V4)
def test_ipv4_mapped_and_nat64_addresses_are_judged_as_the_ipv4_address_they_reach(
    v4: ipaddress.IPv4Address,
) -> None:
    guard = DestinationGuard(cluster=(ipaddress.ip_network("10.96.0.0/12"),))
    expected = guard.refusal(v4, host=str(v4))
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    nat64 = ipaddress.IPv6Address(int(_NAT64.network_address) | int(v4))
    assert guard.refusal(mapped, host=str(mapped)) == expected
    assert guard.refusal(nat64, host=str(nat64)) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("::ffff:169.254.169.254", METADATA), ("::ffff:a9fe:a9fe", METADATA),
        ("::ffff:127.0.0.1", LOOPBACK), ("64:ff9b::a9fe:a9fe", METADATA),
        ("::7f00:1", LOOPBACK), ("2002:a9fe:a9fe::1", METADATA),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", LOOPBACK),  # Teredo, client 127.0.0.1
    ],
)  # fmt: skip
def test_ipv4_inside_ipv6_cannot_smuggle_a_refused_address(text: str, why: str) -> None:
    assert DestinationGuard().refusal(address(text), host=text) == why


def test_cluster_cidrs_and_the_apiserver_are_refused_unless_allowed() -> None:
    guard = DestinationGuard.from_flags(cluster_cidrs=["10.96.0.0/12, 10.244.0.0/16", ""])
    guard = replace(guard, apiserver=(address("192.0.2.10"),))
    assert guard.refusal(address("10.96.0.10"), host="x") == CLUSTER
    assert guard.refusal(address("10.244.3.7"), host="x") == CLUSTER
    assert guard.refusal(address("192.0.2.10"), host="x") == APISERVER
    assert guard.refusal(address("192.0.2.11"), host="x") is None
    assert guard.refusal(address("10.95.255.255"), host="x") is None


def test_the_most_specific_entry_wins_and_a_tie_goes_to_the_allowlist() -> None:
    guard = DestinationGuard.from_flags(allow=["10.0.0.0/8"], cluster_cidrs=["10.96.0.0/12"])
    guard = replace(guard, apiserver=(address("10.96.0.1"),))
    assert guard.refusal(address("10.1.2.3"), host="x") is None  # the allowed network
    assert guard.refusal(address("10.96.0.9"), host="x") == CLUSTER  # more specific refusal
    assert guard.refusal(address("10.96.0.1"), host="x") == APISERVER
    opened = replace(guard, allow=(*guard.allow, ipaddress.ip_network("10.96.0.0/12")))
    assert opened.refusal(address("10.96.0.9"), host="x") is None  # a tie: allowed
    assert opened.refusal(address("10.96.0.1"), host="x") == APISERVER
    assert DestinationGuard.from_flags(allow=["0.0.0.0/0"]).refusal(
        address("127.0.0.1"), host="x"
    ) == LOOPBACK  # fmt: skip
    loopback = DestinationGuard.from_flags(allow=["127.0.0.1"])
    assert loopback.refusal(address("127.0.0.1"), host="x") is None
    assert loopback.refusal(address("127.0.0.2"), host="x") == LOOPBACK


def test_an_allowlisted_host_name_is_trusted_whatever_it_resolves_to() -> None:
    guard = DestinationGuard.from_flags(
        allow=["Hooks.Internal.", "*.monitoring.svc.cluster.local"], cluster_cidrs=["10.96.0.0/12"]
    )
    inside = address("10.96.4.4")
    assert guard.refusal(inside, host="hooks.internal") is None
    assert guard.refusal(inside, host="intake.monitoring.svc.cluster.local") is None
    assert guard.refusal(inside, host="monitoring.svc.cluster.local") == CLUSTER
    assert guard.refusal(inside, host="evilmonitoring.svc.cluster.local") == CLUSTER
    assert guard.refusal(inside, host="hooks.internal.evil.example") == CLUSTER


# --- where it is enforced -----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", METADATA),
        ("http://[::ffff:169.254.169.254]/", METADATA),
        ("http://[::ffff:a9fe:a9fe]/", METADATA),
        ("https://127.0.0.1:6443/api", LOOPBACK),
        ("http://[::1]:8080/", LOOPBACK),
        ("http://[fe80::1%25eth0]/", LINK_LOCAL),
    ],
)
async def test_an_ip_literal_skips_the_resolver_and_is_refused_before_its_socket_exists(
    url: str, why: str
) -> None:
    net = Network()
    error = await attempt(url, net.guard())
    assert error.permanent and why in str(error) and "nothing sent" in str(error)
    assert net.lookups == []  # aiohttp never asks the resolver about a literal
    assert net.dials == []


@pytest.mark.parametrize(
    "host", ["2130706433", "0x7f.1", "0177.0.0.1", "127.1", "0x7f000001", "169.254.169.254."]
)
async def test_legacy_numeric_ipv4_spellings_are_judged_as_the_address_they_spell(
    host: str,
) -> None:
    net = Network()
    error = await attempt(f"http://{host}/", net.guard())
    assert error.permanent and "destination refused" in str(error)
    assert net.lookups == [] and net.dials == []


async def test_an_allowed_address_in_a_legacy_spelling_is_refused_with_its_plain_form() -> None:
    net = Network()
    error = await attempt("http://3232235777/", net.guard())
    assert error.permanent and "write the host as 192.168.1.1" in str(error)
    assert net.lookups == [] and net.dials == []


async def test_a_name_with_one_refused_address_is_refused_whole_before_any_dial() -> None:
    net = Network(answers={"intake.example": [["203.0.113.7", "169.254.169.254"]]})
    error = await attempt("https://intake.example/hook", net.guard())
    assert error.permanent and METADATA in str(error)
    assert net.lookups == ["intake.example"] and net.dials == []


async def test_an_allowed_name_is_dialled_at_exactly_the_address_it_resolved_to() -> None:
    net = Network(answers={"intake.example": [["203.0.113.7"]]})
    error = await attempt("https://intake.example/hook", net.guard())
    assert str(error) == (
        "POST https://intake.example/hook: could not connect (ClientConnectorError)"
    )  # fixed words: nothing of the peer's or the OS error's text
    assert not error.permanent and net.dials == [("203.0.113.7", 443)]


async def test_no_proxy_from_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(variable, "http://203.0.113.99:3128")
    net = Network(answers={"intake.example": [["203.0.113.7"]]})
    await attempt("https://intake.example/hook", net.guard())
    await attempt("http://intake.example/hook", net.guard())
    assert net.dials == [("203.0.113.7", 443), ("203.0.113.7", 80)]


async def test_the_dial_check_refuses_an_address_whatever_handed_it_over() -> None:
    net = Network()
    dial = net.guard().dial("intake.example")
    info = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 80))
    with pytest.raises(DestinationRefusedError):
        dial.open_socket(info)
    assert dial.refused == METADATA and net.dials == []
    unreadable = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("<broadcast>", 80))
    with pytest.raises(DestinationRefusedError):
        net.guard().dial("x").open_socket(unreadable)
    assert net.dials == []


async def test_dns_rebinding_every_attempt_resolves_again_through_the_guard() -> None:
    """First answer public (the dial fails: retryable), second loopback: refused."""
    net = Network(answers={"flip.example": [["203.0.113.7"], ["127.0.0.1"]]})
    client = FakeClient()
    await client.create(SINKS, {"metadata": {"name": "hook", "namespace": NS}, "spec": {
        "type": "Webhook", "webhook": {"url": "https://flip.example/hook"}}},
        namespace=NS)  # fmt: skip

    async def no_sleep(_: float) -> None:
        return None

    fanout = SinkFanout(client=client, options=FanoutOptions(destinations=net.guard()),
                        sleep=no_sleep)  # fmt: skip
    report = await fanout.deliver(envelope(), namespace=NS, sinks=["hook"])
    assert net.lookups == ["flip.example", "flip.example"]
    assert net.dials == [("203.0.113.7", 443)]
    error = report.outcomes[0].error
    assert LOOPBACK in error and "127.0.0.1" not in error


async def test_the_apiserver_host_name_is_refused_by_name_before_any_lookup() -> None:
    net = Network(answers={"api.lab.example": [["203.0.113.50"]]})
    guard = replace(net.guard(), apiserver_hosts=("api.lab.example",))
    error = await attempt("https://API.lab.example.:6443/", guard)
    assert error.permanent and APISERVER in str(error)
    assert net.lookups == [] and net.dials == []


async def test_a_refusal_names_the_kind_never_the_resolved_address_or_a_configured_range() -> None:
    net = Network(answers={"payments.internal": [["10.96.5.5"]]})
    guard = net.guard(cluster=(ipaddress.ip_network("10.96.0.0/12"),))
    error = str(await attempt("https://payments.internal/x", guard))
    assert CLUSTER in error and "payments.internal" in error
    assert "10.96" not in error and "10.96.5.5" not in error


# --- the manager's guard ------------------------------------------------------------


async def test_the_manager_refuses_its_apiserver_by_every_address_and_name() -> None:
    async def resolve(host: str) -> list[IPAddress]:
        assert host == "api.lab.example"
        return [address("192.0.2.10"), address("2001:db8::10")]

    guard, warnings = await manager_guard(
        allow=["10.0.0.0/8"], cluster_cidrs=["10.96.0.0/12"],
        apiserver_url="https://api.lab.example:6443", service_host="10.96.0.1",
        resolve=resolve,
    )  # fmt: skip
    assert warnings == []
    assert guard.apiserver_hosts == ("api.lab.example",)
    for text in ("192.0.2.10", "2001:db8::10", "10.96.0.1"):
        assert guard.refusal(address(text), host=text) == APISERVER
    assert guard.refusal(address("10.20.0.1"), host="x") is None

    async def broken(host: str) -> list[IPAddress]:
        raise socket.gaierror(-2, "Name or service not known")

    guard, warnings = await manager_guard(apiserver_url="https://api.lab.example", resolve=broken)
    assert guard.apiserver_hosts == ("api.lab.example",) and guard.apiserver == ()
    assert len(warnings) == 1 and "refused by name only" in warnings[0]
    literal, _ = await manager_guard(apiserver_url="https://127.0.0.1:41234")
    assert literal.apiserver == (address("127.0.0.1"),) and literal.apiserver_hosts == ()


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [
        ("--sink-allow", "10.0.0.0/8,not a host!", "'not a host!'"),
        ("--sink-allow", "10.1.2.300", "'10.1.2.300'"),
        ("--cluster-cidr", "10.96.0.0/12,hooks.internal", "'hooks.internal'"),
        ("--cluster-cidr", "10.96.0.0/33", "'10.96.0.0/33'"),
    ],
)
def test_sink_allow_and_cluster_cidr_refuse_an_entry_they_cannot_read(
    flag: str, value: str, named: str
) -> None:
    result = CliRunner().invoke(manager, [flag, value])
    assert result.exit_code == 2, result.output
    assert flag in result.output and named in result.output


def test_sink_allow_reads_cidrs_addresses_and_names_comma_separated_and_repeated() -> None:
    guard = DestinationGuard.from_flags(
        allow=["10.20.0.0/16, 127.0.0.1", "", "hooks.internal,*.svc.cluster.local,fd00::/8"],
        cluster_cidrs=["10.96.0.0/12", "fd00:10:96::/108"],
    )
    assert [str(n) for n in guard.allow] == ["10.20.0.0/16", "127.0.0.1/32", "fd00::/8"]
    assert guard.allow_hosts == ("hooks.internal", "*.svc.cluster.local")
    assert [str(n) for n in guard.cluster] == ["10.96.0.0/12", "fd00:10:96::/108"]


# --- what a receiver sees, and what the sink records --------------------------------


@pytest_asyncio.fixture(loop_scope="function")
async def receiver() -> AsyncIterator[Receiver]:
    r = Receiver()
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


async def test_webhook_requests_say_glimmer_and_its_version(receiver: Receiver) -> None:
    guard = DestinationGuard.from_flags(allow=["127.0.0.1"])
    await post(WebhookTarget(url=receiver.url, ca_pem=receiver.ca_pem), body=b"{}",
               delivery_id="d", timestamp=1, timeout=10, guard=guard)  # fmt: skip
    document = {"run": {"namespace": "local", "name": "h"}, "phase": "Passed", "results": []}
    await send_envelope(envelope_from_run_document(document, sent_at=NOW), url=receiver.url,
                        insecure_skip_verify=True)  # fmt: skip
    expected = f"glimmer/{glimmer.__version__}"
    assert [r.headers["User-Agent"] for r in receiver.received] == [expected, expected]


async def test_the_bare_host_sends_to_loopback_because_its_user_chose_the_url(
    receiver: Receiver,
) -> None:
    document = {"run": {"namespace": "local", "name": "h"}, "phase": "Passed", "results": []}
    await send_envelope(envelope_from_run_document(document, sent_at=NOW), url=receiver.url,
                        insecure_skip_verify=True)  # fmt: skip
    assert len(receiver.accepted()) == 1


async def test_a_redirect_is_not_followed_and_nothing_it_says_is_recorded() -> None:
    async def moved(_: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "http://169.254.169.254/secret"},
                            body=b"internal-secret")  # fmt: skip

    app = web.Application()
    app.router.add_post("/hook", moved)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        url = f"http://127.0.0.1:{port}/hook"
        error = await attempt(url, DestinationGuard.from_flags(allow=["127.0.0.1"]))
    finally:
        await runner.cleanup()
    assert error.permanent
    assert str(error) == (f"POST {url}: HTTP 302 Found from the receiver: redirects are not "
                          "followed; point the sink at the final URL")  # fmt: skip
