package main

import (
	"fmt"
	"math/rand"
	"strings"
	"unicode/utf8"
)

// Payload kinds. Text kinds are valid UTF-8 of exactly the requested size
// (a cut inside a character is padded with ASCII spaces).
//
//	binary  random bytes (binary frames)
//	ascii   English-like words, punctuation and newlines (0% non-ASCII)
//	mixed   French-like prose: mostly ASCII with accented letters (~5% of the
//	        bytes in 2-byte sequences), like Cowboy's grok_segond.txt
//	utf8    mostly UTF-8: Japanese (3-byte kana/kanji, most of the bytes),
//	        some Cyrillic (2-byte), rare 4-byte emoji, ASCII spaces and
//	        punctuation
var kinds = []string{"binary", "ascii", "mixed", "utf8"}

var asciiWords = strings.Fields(`the of and to in is that it was for on are as with his they at be this
have from or one had by word but not what all were we when your can said there use an each which she do
how their if will up other about out many then them these so some her would make like him into time has
look two more write go see number no way could people my than first water been call who oil its now find
long down day did get come made may part over new sound take only little work know place year live me back
give most very after thing our just name good sentence man think say great where help through much before
line right too mean old any same tell boy follow came want show also around form three small set put end
does another well large must big even such because turn here why ask went men read need land different
home us move try kind hand picture again change off play spell air away animal house point page letter
mother answer found study still learn should America world server frame socket buffer latency benchmark`)

var mixedWords = strings.Fields(`et le la les de des du un une est que qui dans pour pas sur au avec il
elle ils nous vous son sa ses leur mais ou donc car ni or ce cette ces fut été être avait dit Dieu
Éternel peuple terre ciel eau jour nuit homme femme fils père mère frère maison ville roi prophète
lumière ténèbres création où là déjà voilà après très même là-bas ainsi alors selon entre contre
vers chez sous sans avant pendant depuis encore toujours jamais peut-être œuvre cœur sœur âme fête
forêt île côté goût hôte naître connaître paraître prêtre bâtir répondit écrit étaient lui leurs
tous toutes rien personne chose parole voix main pied tête yeux nom temps lieu monde esprit grâce
vérité gloire sainteté première dernière quarante années génération commandement Israël Jérusalem
Égypte Noël français ça garçon reçu leçon façon naïf Moïse Abraham Isaac Jacob Joseph Pharaon`)

var japaneseWords = strings.Fields(`日本 東京 大阪 京都 私 あなた 彼 彼女 これ それ あれ ここ そこ 今日 明日 昨日
時間 世界 言葉 文字 文章 学校 先生 学生 友達 家族 電車 会社 仕事 問題 答え 質問 意味 自分 人間 社会
経済 政治 歴史 文化 自然 季節 春 夏 秋 冬 山 川 海 空 雨 雪 風 花 木 森 道 町 村 国 心 声 目 手 足
する いる ある なる 言う 行く 来る 見る 聞く 話す 読む 書く 食べる 飲む 思う 知る 考える 分かる
ありがとう こんにちは おはよう さようなら すみません よろしく お願い します ました です ます
カタカナ コンピュータ サーバー ネットワーク プログラム データ メッセージ フレーム ソケット
の は が を に で と も から まで より へ や ね よ か な わ ぞ ぜ さ けれども しかし そして だから`)

var cyrillicWords = strings.Fields(`и в не на я быть он с что а по это она этот к но они мы как из у
который то за свой весь год от так о для ты же все тот мочь вы человек такой его сказать только или
ещё бы себя один когда уже до время если сам другой вот говорить наш мой знать стать при чтобы дело
жизнь кто первый очень два день её новый рука даже во со раз где там под можно ну какой после их
работа без самый потом надо хотеть ли слово идти большой должен место иметь ничто сервер сообщение`)

var emoji = []string{"😀", "🚀", "🎉", "👍", "🌸", "🍣", "🗾", "🐍"}

// makePayloads returns n distinct messages of exactly size bytes and the
// Websocket opcode to send them with (1 text, 2 binary).
func makePayloads(kind string, size, n int, seed int64) ([][]byte, byte, error) {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]byte, n)
	for i := range out {
		switch kind {
		case "binary":
			b := make([]byte, size)
			rng.Read(b)
			out[i] = b
		case "ascii", "mixed", "utf8":
			out[i] = fitText(genText(kind, rng, size+16), size)
			if !utf8.Valid(out[i]) || len(out[i]) != size {
				return nil, 0, fmt.Errorf("internal: bad %s payload", kind)
			}
		default:
			return nil, 0, fmt.Errorf("unknown payload kind %q (binary, ascii, mixed, utf8)", kind)
		}
	}
	if kind == "binary" {
		return out, opBinary, nil
	}
	return out, opText, nil
}

func genText(kind string, rng *rand.Rand, min int) []byte {
	var sb strings.Builder
	sb.Grow(min + 64)
	words := 0
	for sb.Len() < min {
		switch kind {
		case "ascii":
			sb.WriteString(asciiWords[rng.Intn(len(asciiWords))])
		case "mixed":
			sb.WriteString(mixedWords[rng.Intn(len(mixedWords))])
		case "utf8":
			r := rng.Intn(100)
			switch {
			case r < 88:
				sb.WriteString(japaneseWords[rng.Intn(len(japaneseWords))])
			case r < 98:
				sb.WriteString(cyrillicWords[rng.Intn(len(cyrillicWords))])
			default:
				sb.WriteString(emoji[rng.Intn(len(emoji))])
			}
		}
		words++
		switch {
		case kind == "utf8" && words%12 == 0:
			sb.WriteString("。")
		case kind == "utf8" && words%5 == 0:
			sb.WriteString("、")
		case kind == "utf8":
			// Japanese has no spaces between words
		case words%17 == 0:
			sb.WriteString(".\n")
		case words%7 == 0:
			sb.WriteString(", ")
		default:
			sb.WriteByte(' ')
		}
	}
	return []byte(sb.String())
}

// fitText cuts b to exactly size bytes at a character boundary, padding the
// end with spaces.
func fitText(b []byte, size int) []byte {
	if len(b) < size {
		panic("fitText: short text")
	}
	cut := size
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	out := make([]byte, size)
	copy(out, b[:cut])
	for i := cut; i < size; i++ {
		out[i] = ' '
	}
	return out
}
