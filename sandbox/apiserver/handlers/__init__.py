"""The emulator's request handling for one resource, one module per verb.

- ``dispatch.py``     ``Handlers``: picks the verb from method, name and subresource; renders the reply.
- ``base.py``         ``RequestContext``: the request, object lookup, selectors, body decoding, admission.
- ``reads.py``        GET of an object and list (selectors, paging, Table / metadata-only views).
- ``watch.py``        ``?watch=true``: the event stream (resume, initial events, bookmarks).
- ``writes.py``       create, update (incl. /status, /finalize), patch and server-side apply.
- ``delete.py``       delete and deletecollection (options, preconditions).
- ``subresources.py`` /scale, pods/eviction, pods/binding, pods/log; SelfSubjectAccessReview.

Each verb module is a mixin over ``RequestContext``; ``dispatch.Handlers`` combines them.
"""
