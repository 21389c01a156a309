"""Plain-JSON access to the apiserver over kubernetes_asyncio's authenticated transport.

The simulated kubelet edits pod and node status as JSON documents; going through the
generated model classes would cost a round trip through (de)serialisation for every
event and lose fields the models do not know. Authentication, TLS and kubeconfig
handling stay kubernetes_asyncio's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from kubernetes_asyncio.client import ApiClient

JSON = dict[str, Any]


class ApiError(Exception):
    """A non-2xx answer; ``status`` is the HTTP code, ``body`` the decoded Status if any."""

    def __init__(self, status: int, body: JSON) -> None:
        super().__init__(f"HTTP {status}: {body.get('message', body)}")
        self.status = status
        self.body = body


class Kube:
    """Requests as cluster JSON documents through one :class:`ApiClient`."""

    def __init__(self, api: ApiClient) -> None:
        self.api = api

    async def _raw(
        self,
        method: str,
        path: str,
        *,
        body: object = None,
        query: Mapping[str, str | int] | None = None,
        content_type: str = "application/json",
        timeout: float | None = 30.0,
    ) -> Any:
        return await self.api.call_api(
            path,
            method,
            query_params=list((query or {}).items()),
            header_params={"Content-Type": content_type, "Accept": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=timeout,
        )

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: object = None,
        query: Mapping[str, str | int] | None = None,
        content_type: str = "application/json",
    ) -> JSON:
        response = await self._raw(method, path, body=body, query=query, content_type=content_type)
        async with response:
            text = await response.text()
            status = int(response.status)
        document: JSON = json.loads(text) if text else {}
        if not 200 <= status < 300:
            raise ApiError(status, document)
        return document

    async def merge_patch(self, path: str, body: JSON) -> JSON:
        return await self.request(
            "PATCH", path, body=body, content_type="application/merge-patch+json"
        )

    async def watch(self, path: str, *, query: Mapping[str, str | int]) -> AsyncIterator[JSON]:
        """Yield watch events until the server ends the stream; an ERROR event is raised."""
        response = await self._raw("GET", path, query={**query, "watch": "true"}, timeout=None)
        async with response:
            if response.status != 200:
                raise ApiError(int(response.status), json.loads(await response.text() or "{}"))
            async for line in response.content:
                if not line.strip():
                    continue
                event: JSON = json.loads(line)
                if event.get("type") == "ERROR":
                    status = event.get("object", {})
                    raise ApiError(int(status.get("code", 500)), status)
                yield event
