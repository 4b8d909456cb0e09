"""Synthetic passages for the e5 parity test, written for it (no vault text): English,
German, Chinese and Japanese, a few other scripts, Markdown, odd characters, and two
passages longer than 512 tokens (read by the model in windows)."""

from __future__ import annotations

ENGLISH = [
    "The greenhouse thermostat drops to twelve degrees at night, so the tomato seedlings stay on the heat mat.",
    "Quarterly budget review: travel spending fell by a fifth while software licences rose again.",
    "When the ferry is cancelled, the backup route goes over the northern bridge and adds forty minutes.",
    "She rewrote the onboarding checklist so that new volunteers learn the kitchen rules on their first day.",
    "Sourdough needs a warm corner; in winter the starter doubles in eight hours instead of five.",
    "The migration script copies every invoice into the archive table before it deletes the originals.",
    "Our reading group meets on the second Thursday of each month in the library's small room.",
    "Bicycle maintenance: clean the chain, check the brake pads, and pump the tyres to four bar.",
    "The interview notes mention three complaints about the slow login page on older phones.",
    "A short walk after lunch helped more with the afternoon slump than a second cup of coffee.",
]
GERMAN = [
    "Die Heizung im Keller springt erst an, wenn die Außentemperatur unter fünf Grad fällt.",
    "Für das Sommerfest brauchen wir zwanzig Bänke, drei Grills und genug Schatten für die Kinder.",
    "Der Zug nach Hamburg hatte heute wieder vierzig Minuten Verspätung wegen einer Weichenstörung.",
    "Im Protokoll steht, dass die Mieterversammlung den neuen Fahrradraum mit großer Mehrheit beschlossen hat.",
    "Sauerteigbrot gelingt am besten, wenn der Teig über Nacht im Kühlschrank ruhen darf.",
    "Die Datenbank wird jeden Sonntag um drei Uhr gesichert und die Kopie verschlüsselt abgelegt.",
    "Unsere Wanderung führte über den Kamm bis zur Hütte, wo es Kaiserschmarrn und heißen Tee gab.",
    "Bitte die Rechnungen bis Monatsende einreichen, sonst verschiebt sich die Erstattung um einen Monat.",
]
CHINESE = [
    "温室的温度晚上会降到十二度，所以番茄幼苗一直放在加热垫上。",
    "季度预算复盘：差旅支出减少了五分之一，但软件许可费用又上涨了。",
    "如果渡轮停航，备用路线要经过北边的大桥，多花四十分钟。",
    "读书会每个月第二个星期四在图书馆的小会议室举行。",
    "数据库每周日凌晨三点自动备份，备份文件加密后存放在另一台服务器上。",
    "这次徒步沿着山脊一直走到山顶的小屋，我们在那里喝了热茶。",
    "请在月底之前提交报销单，否则报销会推迟到下个月。",
    "新来的志愿者第一天就要学习厨房的卫生规定和值班安排。",
]
JAPANESE = [
    "温室の温度は夜になると十二度まで下がるので、トマトの苗は加温マットの上に置いている。",
    "四半期の予算見直し：出張費は二割減ったが、ソフトウェアのライセンス費はまた増えた。",
    "フェリーが欠航した場合は、北側の橋を通る迂回路で四十分ほど余計にかかる。",
    "読書会は毎月第二木曜日に図書館の小さな会議室で開かれる。",
    "データベースは毎週日曜日の午前三時にバックアップされ、暗号化して別のサーバーに保存される。",
    "山の尾根を歩いて山頂の小屋まで行き、そこで温かいお茶を飲んだ。",
    "月末までに経費精算を提出しないと、払い戻しが翌月にずれ込みます。",
    "ｶﾀｶﾅの半角表記とＡＢＣの全角英字も正規化の対象になる。",
]
OTHER = [
    "Le marché du samedi ouvre à sept heures ; les fromages partent avant neuf heures.",
    "La reunión de vecinos aprobó pintar la fachada en primavera y cambiar el portero automático.",
    "Отчёт о поездке: поезд опоздал на час, но гостиница оказалась рядом с вокзалом.",
    "주간 회의에서 새 디자인 시안을 검토하고 다음 주까지 수정하기로 했다.",
    "Η συνάντηση μεταφέρθηκε στην Τρίτη λόγω της απεργίας στα μέσα μεταφοράς.",
]
ODD = [
    "# Weekly plan\n\n- [ ] call the plumber\n- [x] order seeds\n\nSee [[Garden log]] and `make backup`.",
    "Tabs\tand  double  spaces\n\nand trailing newlines\r\n",
    "Markup <s> and </s> and <mask> written literally in a note, plus <pad> & <unk>.",
    "Ligatures ﬁ ﬂ, full-width ＡＢＣ１２３, circled ① ② and the ℃ sign.",
    "Emoji 🌱🍞🚲 and symbols ✓ ✗ → ← in a to-do list.",
    "Runes ᚠᛇᚻ and the rare ꙮ fall back to the unknown token.",
    "Zero\u200bwidth, non\u00a0breaking and soft\u00adhyphen characters.",
    "Numbers 3.14159, 2024-05-17, 10:45, +49 30 1234567 and 1,250.00 EUR.",
]


def _paragraph(sentences: list[str], start: int, count: int, sep: str) -> str:
    return sep.join(sentences[(start + i) % len(sentences)] for i in range(count))


def passages() -> list[str]:
    """57 passages: single sentences, paragraphs of 2-5 sentences per language, mixed
    languages, and two long ones (past 512 tokens)."""
    out: list[str] = []
    out += ENGLISH + GERMAN[:6] + CHINESE[:4] + JAPANESE[:4] + OTHER + ODD
    for lang, sep in ((ENGLISH, " "), (GERMAN, " "), (CHINESE, ""), (JAPANESE, "")):
        out += [_paragraph(lang, 1, 2, sep), _paragraph(lang, 3, 3, sep), _paragraph(lang, 2, 5, sep)]
    out += [
        ENGLISH[6] + "\n\n" + GERMAN[5],
        CHINESE[5] + " " + ENGLISH[7],
        "## " + JAPANESE[4] + "\n\n" + ENGLISH[8],
        GERMAN[6] + " " + CHINESE[6] + " " + JAPANESE[6],
    ]
    long_english = "\n\n".join(_paragraph(ENGLISH, i, 4, " ") for i in range(8))
    long_mixed = "\n".join(_paragraph(s, i, 3, "") for i, s in enumerate([CHINESE, JAPANESE] * 5))
    out += [long_english, long_mixed]
    return out
