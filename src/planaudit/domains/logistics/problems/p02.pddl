;; Two cities: truck to the airport, then airplane to the airport
;; of the other city.
(define (problem logistics-p02)
  (:domain logistics)
  (:objects
    city1 city2 - city
    ap1 ap2 - airport
    l1a l2a - location
    t1 t2 - truck
    a1 - airplane
    p1 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1)
    (in-city ap2 city2) (in-city l2a city2)
    (at t1 l1a)
    (at t2 l2a)
    (at a1 ap1)
    (at p1 l1a)
    (= (total-cost) 0))
  (:goal (and
    (at p1 ap2)))
  (:metric minimize (total-cost)))
