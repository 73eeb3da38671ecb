"""Variant-character tables for the text fold, kept as Python source (no data files to package).

Kanji: kyūjitai (旧字体) → shinjitai (新字体), one character to one, from the Jōyō Kanji Table
(常用漢字表, Cabinet Notice No. 2 of 30 November 2010, Agency for Cultural Affairs 文化庁), which
prints the traditional form (康熙字典体) of 364 characters in parentheses after the standard
one. The pairs were taken from the machine-readable transcription of that table in
github.com/dahlia/shinjitai-table (``kyujitai.json``). Traditional forms that Unicode encodes
only as CJK compatibility ideographs (e.g. U+FA67 逸) are left out: NFKC already maps them to
the unified character. Where the reform merged several old characters into one (辨 辯 瓣 → 弁),
each maps to the new one.

Arabic: the alef forms carrying hamza or madda fold to bare alef, as Apache Lucene's
``ArabicNormalizer`` (org.apache.lucene.analysis.ar) does for Arabic search ("normalization of
hamza with alef seat to a bare alef"); alef wasla (ٱ) is not part of that rule and is kept.
"""

from __future__ import annotations

__all__ = ["ARABIC_LETTER_VARIANTS", "KANJI_VARIANTS"]

_KYUJITAI = (
    "亞惡壓圍醫爲壹隱榮營衞驛圓鹽緣艷應歐毆櫻奧橫溫穩假價畫會繪壞懷槪擴殼覺學嶽樂渴罐"
    "卷陷勸寬關歡觀氣歸龜僞戲犧舊據擧虛峽挾狹鄕曉區驅勳薰徑莖惠揭溪經螢輕繼鷄藝擊缺硏"
    "縣儉劍險圈檢獻權顯驗嚴廣效恆黃鑛號國黑碎濟齋劑雜參棧蠶慘贊殘絲齒兒辭濕實寫釋壽收"
    "從澁獸縱肅處緖敍將稱涉燒證奬條狀乘淨剩疊繩壤孃讓釀觸囑眞寢愼盡圖粹醉穗隨髓樞數瀨"
    "聲齊靜竊攝專淺戰踐錢潛纖禪雙壯爭莊搜插巢曾瘦裝總騷增藏臟卽屬續墮對體帶滯臺瀧擇澤"
    "擔單膽團斷彈遲癡蟲晝鑄廳徵聽敕鎭遞鐵點轉傳燈當黨盜稻鬭德獨讀屆貳惱腦霸拜廢賣麥發"
    "髮拔晚蠻祕濱甁拂佛倂竝餠邊變辯辨瓣步寶豐襃飜每萬滿麵默彌譯藥與豫餘譽搖樣謠來賴亂"
    "覽龍兩獵綠淚壘禮勵戾靈齡曆歷戀鍊爐勞郞樓錄灣"
)
_SHINJITAI = (
    "亜悪圧囲医為壱隠栄営衛駅円塩縁艶応欧殴桜奥横温穏仮価画会絵壊懐概拡殻覚学岳楽渇缶"
    "巻陥勧寛関歓観気帰亀偽戯犠旧拠挙虚峡挟狭郷暁区駆勲薫径茎恵掲渓経蛍軽継鶏芸撃欠研"
    "県倹剣険圏検献権顕験厳広効恒黄鉱号国黒砕済斎剤雑参桟蚕惨賛残糸歯児辞湿実写釈寿収"
    "従渋獣縦粛処緒叙将称渉焼証奨条状乗浄剰畳縄壌嬢譲醸触嘱真寝慎尽図粋酔穂随髄枢数瀬"
    "声斉静窃摂専浅戦践銭潜繊禅双壮争荘捜挿巣曽痩装総騒増蔵臓即属続堕対体帯滞台滝択沢"
    "担単胆団断弾遅痴虫昼鋳庁徴聴勅鎮逓鉄点転伝灯当党盗稲闘徳独読届弐悩脳覇拝廃売麦発"
    "髪抜晩蛮秘浜瓶払仏併並餅辺変弁弁弁歩宝豊褒翻毎万満麺黙弥訳薬与予余誉揺様謡来頼乱"
    "覧竜両猟緑涙塁礼励戻霊齢暦歴恋錬炉労郎楼録湾"
)

KANJI_VARIANTS: dict[str, str] = dict(zip(_KYUJITAI, _SHINJITAI, strict=True))
"""Kyūjitai → shinjitai (e.g. 假 → 仮, 燈 → 灯, 澤 → 沢, 國 → 国, 學 → 学)."""

ARABIC_LETTER_VARIANTS: dict[str, str] = {
    "\u0622": "\u0627",  # آ alef with madda above
    "\u0623": "\u0627",  # أ alef with hamza above
    "\u0625": "\u0627",  # إ alef with hamza below
}
"""Arabic alef variants → bare alef (ا)."""
