-- wrk: every other request goes to the slow route; counts the responses
-- that told wrk to close the connection, printed at the end as
-- "closes N".
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  i = 0
  closes = 0
end

function request()
  i = i + 1
  if i % 2 == 0 then
    return wrk.format("GET", "/slow")
  end
  return wrk.format("GET", "/")
end

function response(status, headers, body)
  if headers["connection"] == "close" then
    closes = closes + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("closes")
  end
  print("closes " .. total)
end
