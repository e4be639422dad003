-- wrk script: GET /v2/reconstructions/<file id> with a bearer token, rotating over a few
-- small files. Set by bench/cas_bench_tool (mode wrk), or by hand:
--   XETSTORE_BENCH_TOKEN   a read token (hf_...)
--   XETSTORE_BENCH_FILES   comma-separated file ids (Xet hash hex)
-- e.g. XETSTORE_BENCH_TOKEN=hf_... XETSTORE_BENCH_FILES=ab..,cd.. \
--        wrk -t2 -c64 -d30s --latency -s bench/wrk-reconstructions.lua http://127.0.0.1:8080

local token = os.getenv("XETSTORE_BENCH_TOKEN")
local files = os.getenv("XETSTORE_BENCH_FILES")
if token == nil or token == "" or files == nil or files == "" then
  error("set XETSTORE_BENCH_TOKEN and XETSTORE_BENCH_FILES")
end

local requests = {}
local next_request = 0

-- Runs once per wrk thread: pre-formats one request per file.
function init(args)
  local headers = { ["Authorization"] = "Bearer " .. token }
  for id in string.gmatch(files, "[^,]+") do
    requests[#requests + 1] = wrk.format("GET", "/v2/reconstructions/" .. id, headers)
  end
end

function request()
  next_request = next_request % #requests + 1
  return requests[next_request]
end
