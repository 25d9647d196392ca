%% GET / : an HTML form that uploads a file to /upload.
-module(upload_form_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>}, <<
		"<!DOCTYPE html>\n<html><head><title>Upload</title></head><body>\n"
		"<form action=\"/upload\" method=\"post\" enctype=\"multipart/form-data\">\n"
		"<p><input type=\"text\" name=\"comment\" placeholder=\"comment\"></p>\n"
		"<p><input type=\"file\" name=\"file\"></p>\n"
		"<p><input type=\"submit\" value=\"Upload\"></p>\n"
		"</form>\n</body></html>\n">>, Req), State}.
