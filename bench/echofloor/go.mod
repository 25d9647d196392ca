module mustang.local/bench/echofloor

go 1.19
