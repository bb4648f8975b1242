"""Word lists the seed draws from: names, places and a bilingual product catalogue.

Some English surnames contain an apostrophe on purpose: real data carries SQL-significant
characters, and the tools must treat them as data.
"""

from __future__ import annotations

from typing import NamedTuple

DEFAULT_SEED = 2024  # here, not in seed.py, so the CLI can show it without SQLAlchemy

CN_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗"
CN_GIVEN = [
    "伟",
    "芳",
    "娜",
    "敏",
    "静",
    "丽",
    "强",
    "磊",
    "军",
    "洋",
    "勇",
    "艳",
    "杰",
    "娟",
    "涛",
    "明",
    "超",
    "秀英",
    "霞",
    "平",
    "刚",
    "桂英",
    "华",
    "建华",
    "晓明",
    "思远",
    "子涵",
    "雨桐",
    "浩然",
    "欣怡",
]
EN_FIRST = [
    "James",
    "Mary",
    "John",
    "Patricia",
    "Robert",
    "Jennifer",
    "Michael",
    "Linda",
    "William",
    "Elizabeth",
    "David",
    "Barbara",
    "Richard",
    "Susan",
    "Joseph",
    "Jessica",
    "Thomas",
    "Sarah",
    "Charles",
    "Karen",
    "Emma",
    "Oliver",
    "Sophia",
    "Liam",
    "Noah",
    "Olivia",
]
EN_LAST = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Wilson",
    "Anderson",
    "Taylor",
    "Moore",
    "Martin",
    "Lee",
    "Walker",
    "Hall",
    "Allen",
    "Young",
    "King",
    "O'Brien",
    "O'Neill",
    "D'Angelo",
]


class Place(NamedTuple):
    country: str
    province: str
    city: str
    postcode_prefix: str
    streets: tuple[str, ...]
    chinese: bool
    """Addresses written in Chinese (else in English)."""


CN_PLACES = (
    Place("CN", "上海市", "上海", "200", ("南京西路", "淮海中路", "世纪大道"), True),
    Place("CN", "北京市", "北京", "100", ("建国路", "中关村大街", "长安街"), True),
    Place("CN", "广东省", "广州", "510", ("天河路", "环市东路"), True),
    Place("CN", "广东省", "深圳", "518", ("深南大道", "科技园路"), True),
    Place("CN", "浙江省", "杭州", "310", ("文三路", "延安路"), True),
    Place("CN", "四川省", "成都", "610", ("春熙路", "天府大道"), True),
    Place("CN", "湖北省", "武汉", "430", ("中山大道", "解放大道"), True),
    Place("CN", "陕西省", "西安", "710", ("长安北路",), True),
    Place("CN", "江苏省", "南京", "210", ("中山路",), True),
    Place("CN", "新疆维吾尔自治区", "乌鲁木齐", "830", ("友好北路",), True),
    Place("CN", "西藏自治区", "拉萨", "850", ("北京中路",), True),
    Place("CN", "青海省", "西宁", "810", ("五四大街",), True),
)
EN_PLACES = (
    Place("CN", "Shanghai", "Shanghai", "200", ("Huaihai Middle Road", "Century Avenue"), False),
    Place("CN", "Beijing", "Beijing", "100", ("Jianguo Road", "Sanlitun Road"), False),
    Place("US", "CA", "San Francisco", "941", ("Market Street", "Mission Street"), False),
    Place("US", "NY", "New York", "100", ("Broadway", "5th Avenue"), False),
    Place("GB", "England", "London", "", ("Baker Street", "King's Road"), False),
    Place("SG", "Singapore", "Singapore", "", ("Orchard Road", "Raffles Place"), False),
)
UK_POSTCODES = ("NW1 6XE", "SW3 4RY", "EC1A 1BB", "W1D 3QU", "SE1 9GF")


class ProductLine(NamedTuple):
    name_zh: str
    name_en: str
    category: str
    price: int
    """Base price in CNY of the standard edition."""
    weight_g: int
    options: tuple[str, ...]
    """Variant attribute values (colours, sizes, flavours...)."""


PRODUCT_LINES = (
    ProductLine(
        "无线蓝牙耳机", "Wireless Earbuds", "electronics", 199, 150, ("黑色 Black", "白色 White")
    ),
    ProductLine(
        "机械键盘",
        "Mechanical Keyboard",
        "electronics",
        399,
        1100,
        ("红轴 Red switch", "茶轴 Brown switch"),
    ),
    ProductLine("无线鼠标", "Wireless Mouse", "electronics", 129, 120, ("黑色 Black", "灰色 Grey")),
    ProductLine("移动电源", "Power Bank", "electronics", 159, 350, ("10000mAh", "20000mAh")),
    ProductLine("智能手表", "Smart Watch", "electronics", 899, 200, ("41mm", "45mm")),
    ProductLine("纯棉T恤", "Cotton T-Shirt", "clothing", 79, 250, ("S", "M", "L", "XL")),
    ProductLine("牛仔裤", "Jeans", "clothing", 259, 700, ("28", "30", "32", "34")),
    ProductLine("羽绒服", "Down Jacket", "clothing", 899, 1300, ("M", "L", "XL")),
    ProductLine("跑步鞋", "Running Shoes", "shoes", 499, 900, ("40", "41", "42", "43")),
    ProductLine("帆布鞋", "Canvas Sneakers", "shoes", 199, 800, ("38", "39", "40", "41")),
    ProductLine("保温杯", "Insulated Bottle", "home", 99, 400, ("500ml", "750ml")),
    ProductLine("不粘锅", "Non-stick Pan", "home", 189, 1600, ("26cm", "28cm")),
    ProductLine("乳胶枕", "Latex Pillow", "home", 239, 1200, ("标准 Standard", "加高 High")),
    ProductLine(
        "香薰蜡烛", "Scented Candle", "home", 69, 300, ("薰衣草 Lavender", "檀香 Sandalwood")
    ),
    ProductLine("绿茶", "Green Tea", "food", 128, 500, ("250g", "500g")),
    ProductLine("咖啡豆", "Coffee Beans", "food", 98, 550, ("中烘 Medium", "深烘 Dark")),
    ProductLine("坚果礼盒", "Nut Gift Box", "food", 168, 1500, ("经典 Classic", "豪华 Deluxe")),
    ProductLine("月饼礼盒", "Mooncake Box", "food", 258, 1800, ("莲蓉 Lotus", "五仁 Five-nut")),
    ProductLine("瑜伽垫", "Yoga Mat", "sports", 149, 1800, ("6mm", "8mm")),
    ProductLine("哑铃", "Dumbbells", "sports", 299, 10000, ("5kg", "10kg")),
    ProductLine("羽毛球拍", "Badminton Racket", "sports", 359, 300, ("3U", "4U")),
    ProductLine("儿童绘本", "Picture Book", "books", 45, 400, ("中文 Chinese", "英文 English")),
    ProductLine(
        "编程入门", "Intro to Programming", "books", 89, 700, ("平装 Paperback", "精装 Hardcover")
    ),
    ProductLine("面霜", "Face Cream", "beauty", 329, 200, ("50ml", "100ml")),
    ProductLine("口红", "Lipstick", "beauty", 239, 50, ("正红 Red", "豆沙 Rose")),
)
EDITIONS = (("标准版", "Standard", 100), ("高配版", "Pro", 160))
"""(Chinese, English, price percent): each product line comes in two editions."""
