%% Character classes of the header grammars (RFC 9110 5.6, RFC 3986), shared by
%% mustang_http_hd, mustang_http_hd_accept and mustang_http_hd_grammar.

-define(IS_WS(C), (C =:= $\s orelse C =:= $\t)).
-define(IS_DIGIT(C), (C >= $0 andalso C =< $9)).
-define(IS_ALPHA(C), ((C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z))).
-define(IS_ALNUM(C), (?IS_ALPHA(C) orelse ?IS_DIGIT(C))).
-define(IS_HEX(C), (?IS_DIGIT(C) orelse (C >= $a andalso C =< $f)
	orelse (C >= $A andalso C =< $F))).
-define(IS_TCHAR(C), (?IS_ALNUM(C) orelse C =:= $! orelse C =:= $# orelse C =:= $$
	orelse C =:= $% orelse C =:= $& orelse C =:= $' orelse C =:= $* orelse C =:= $+
	orelse C =:= $- orelse C =:= $. orelse C =:= $^ orelse C =:= $_ orelse C =:= $`
	orelse C =:= $| orelse C =:= $~)).
%% VCHAR and obs-text.
-define(IS_VISIBLE(C), (C >= 16#21 andalso C =/= 16#7f)).
%% unreserved and sub-delims of RFC 3986.
-define(IS_URI_CHAR(C), (?IS_ALNUM(C) orelse C =:= $- orelse C =:= $. orelse C =:= $_
	orelse C =:= $~ orelse C =:= $! orelse C =:= $$ orelse C =:= $& orelse C =:= $'
	orelse C =:= $( orelse C =:= $) orelse C =:= $* orelse C =:= $+ orelse C =:= $,
	orelse C =:= $; orelse C =:= $=)).
