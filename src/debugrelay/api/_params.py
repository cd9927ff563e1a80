"""Query parameters of the routes worded by hand, with the bounds the operations declare (``models.limits``),
so the OpenAPI document states them."""

from __future__ import annotations

from debugrelay.models import limits

from ._derived import query_type

Start = query_type(limits.Start)
Count = query_type(limits.Count | None)
PageSize = query_type(limits.Count)
