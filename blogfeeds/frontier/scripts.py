"""The frontier's Lua scripts: each runs atomically in Redis, so a worker killed between two of
its steps cannot leave a request seen but not queued, or popped but not recorded in flight.

Queue kinds (``ARGV`` ``kind``): ``zset`` (scrapy-redis ``PriorityQueue``, score = -priority),
``fifo`` (``FifoQueue``: LPUSH, RPOP) and ``lifo`` (``LifoQueue``: LPUSH, LPOP).
"""

DEQUEUE = """
local data
if ARGV[1] == 'zset' then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)
  data = head[1]
  if data then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, 0) end
elseif ARGV[1] == 'fifo' then
  data = redis.call('RPOP', KEYS[1])
else
  data = redis.call('LPOP', KEYS[1])
end
if not data then return false end
local lease = 'r' .. redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], lease, data)
return {lease, data}
"""
"""Pop the head of the queue and record it in flight under a new lease id ``r<n>`` (a kill
between the two would lose the request: it is in the dupefilter already).
KEYS: queue, inflight, lease_seq. ARGV: kind. Returns ``{lease, data}`` or false."""

ENQUEUE = """
local added = 1
if ARGV[1] ~= '' then added = redis.call('SADD', KEYS[1], ARGV[1]) end
if added == 1 then
  if ARGV[2] == 'zset' then
    redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
  else
    redis.call('LPUSH', KEYS[2], ARGV[4])
  end
end
if ARGV[5] ~= '' then redis.call('HDEL', KEYS[3], ARGV[5]) end
return added
"""
"""Mark seen and queue in one step; release the lease of the request it replaces (a redirect
or retry of a popped request, or a seed). KEYS: dupefilter, queue, inflight.
ARGV: fingerprint ('' = dont_filter), kind, score, data, lease ('' = none). Returns 1 if queued,
0 if seen before."""

POP_SEEDS = """
local out = {}
for i = 1, tonumber(ARGV[1]) do
  local data = redis.call('LPOP', KEYS[1])
  if not data then break end
  local lease = 's' .. redis.call('INCR', KEYS[3])
  redis.call('HSET', KEYS[2], lease, data)
  out[#out + 1] = lease
  out[#out + 1] = data
end
return out
"""
"""Pop up to ARGV[1] seeds and record each in flight under a lease id ``s<n>``.
KEYS: start_urls, inflight, lease_seq. Returns ``{lease, data, lease, data, ...}``."""

CLAIM_BLOG = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
  return 1
end
return 0
"""
"""First sighting of a blog id anywhere: record it, and remember it as pending (not durable)
for this worker. KEYS: blog_ids, claims. ARGV: blog id, worker. Returns 1 for a first sighting."""

RELEASE_CLAIMS = """
local ids = redis.call('SMEMBERS', KEYS[2])
for _, id in ipairs(ids) do
  if redis.call('HGET', KEYS[1], id) == ARGV[1] then redis.call('HDEL', KEYS[1], id) end
end
redis.call('DEL', KEYS[2])
return #ids
"""
"""A restarted worker forgets the claims whose items its predecessor never made durable, so
that the replayed requests (fetched by any worker) store them. KEYS: blog_ids, claims.
ARGV: worker. Returns the number of claims released."""

_DEPTH_OF = """
local known = redis.call('HGET', KEYS[1], ARGV[1])
local depth, token
if known then depth, token = string.match(known, '^(%d+) ?(.*)$'); depth = tonumber(depth) end
"""
# Shared start of the depth scripts: ``known`` (the blog's entry in the depths hash or false),
# ``depth`` (its best depth) and ``token`` (the re-push token of the copy downloaded, or '').

OFFER_DEPTH = (
    _DEPTH_OF
    + """
if not known then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {0}
end
if tonumber(ARGV[2]) >= depth then return false end
if token ~= '' then token = ' ' .. token end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. token)
local friends = redis.call('HGET', KEYS[2], ARGV[1])
if friends then return {2, friends} end
return {1}
"""
)
"""Set a blog's depth if lower, and say what lowering it asks for. KEYS: depths, friends.
ARGV: blog id, depth. Returns false (known at that depth or lower), ``{0}`` (new), ``{1}``
(lowered, not read yet: queue a copy at the new depth) or ``{2, friends}`` (lowered, read: offer
its friends, one URL a line, at the new depth + 1)."""

READ_DEPTH = (
    _DEPTH_OF
    + """
local best = tonumber(ARGV[2])
if known and depth <= best then
  best = depth
else
  if token and token ~= '' then token = ' ' .. token else token = '' end
  redis.call('HSET', KEYS[1], ARGV[1], best .. token)
end
if best > 0 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
return best
"""
)
"""A blog's page was read: record its friends in the same step as reading its best depth, so
that a shorter path found later offers them again (a seed's are never needed). KEYS: depths,
friends. ARGV: blog id, depth requested at, friends (one URL a line; '' without a
``DEPTH_LIMIT``: only that the blog was read). Returns the best depth (the requested one or
lower)."""

CLAIM_DOWNLOAD = (
    _DEPTH_OF
    + """
if not known then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[3])
  return 1
end
if token ~= '' then
  if token == ARGV[3] then return 1 end
  return 0
end
if tonumber(ARGV[2]) > depth then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], depth .. ' ' .. ARGV[3])
return 1
"""
)
"""A copy of a blog's request is about to be downloaded: 1 when it may be (the first copy at the
blog's best depth, or a retry or redirect of the copy downloaded: same token), 0 when it is stale
(a copy was downloaded already, or a shorter path queued a copy at a lower depth).
KEYS: depths. ARGV: blog id, depth, re-push token."""
